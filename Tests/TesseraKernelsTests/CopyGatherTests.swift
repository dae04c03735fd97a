import TesseraKernels
import Testing
import _TesseraTestSupport

/// Random indices in `-size..<size` (negative ones count from the end).
func randomIndices(_ count: Int, axisSize: Int, using rng: inout SeededRandom) -> [Int32] {
    axisSize == 0 ? [] : (0..<count).map { _ in Int32(Int.random(in: -axisSize..<axisSize, using: &rng)) }
}

@Suite("Copy: gather and scatter")
struct CopyGatherTests {
    @Test("gather matches numpy.take, negative indices included", arguments: LayoutKind.allCases)
    func gather(kind: LayoutKind) {
        var rng = SeededRandom(seed: 30)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 1...4 {
                for trial in 0..<4 {
                    var shape = randomShape(rank: rank, allowZero: false, using: &rng)
                    let axis = Int.random(in: 0..<rank, using: &rng)
                    // Now and then an empty dimension off the axis.
                    if trial == 3 && rank > 1 { shape[(axis + 1) % rank] = 0 }
                    let x = trial == 2 ? broadcastOperand(T.self, shape, using: &rng) : operand(T.self, kind, shape)
                    let indicesShape = randomShape(
                        rank: Int.random(in: 0...2, using: &rng), sizes: 0...3, allowZero: false, using: &rng)
                    let indices = randomIndices(indicesShape.reduce(1, *), axisSize: shape[axis], using: &rng)
                    let expected = NaiveCopy.take(
                        x.logicalElements, shape: shape, axis: axis, indices: indices, indicesShape: indicesShape)
                    let got = withRaw(x.storage) { src in
                        indices.withUnsafeBufferPointer { idx in
                            output(T.self, count: expected.count) { dst in
                                CopyKernels.gather(
                                    from: src, layout: x.layout, axis: axis - (trial == 1 ? rank : 0),
                                    indices: idx.baseAddress ?? UnsafePointer(bitPattern: 8)!,
                                    indicesShape: indicesShape,
                                    elementSize: MemoryLayout<T>.stride, to: dst)
                            }
                        }
                    }
                    #expect(got == expected, "\(T.self) \(x.layout) axis \(axis) indices \(indices) \(indicesShape)")
                }
            }
        }
    }

    @Test("an embedding lookup: [1000, 64] float32 table, [4, 300] tokens (parallel rows)")
    func embedding() {
        var rng = SeededRandom(seed: 31)
        let table = operand(Float.self, .contiguous, [1000, 64])
        let tokens = randomIndices(1200, axisSize: 1000, using: &rng)
        let expected = NaiveCopy.take(
            table.storage, shape: [1000, 64], axis: 0, indices: tokens, indicesShape: [4, 300])
        let got = withRaw(table.storage) { src in
            tokens.withUnsafeBufferPointer { idx in
                output(Float.self, count: expected.count) { dst in
                    CopyKernels.gather(
                        from: src, layout: table.layout, axis: 0, indices: idx.baseAddress!, indicesShape: [4, 300],
                        elementSize: 4, to: dst)
                }
            }
        }
        expectSameElements(got, expected, "embedding")
    }

    @Test("gatherElements matches torch.gather", arguments: LayoutKind.allCases)
    func gatherElements(kind: LayoutKind) {
        var rng = SeededRandom(seed: 32)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 1...4 {
                for trial in 0..<4 {
                    let shape = randomShape(rank: rank, allowZero: false, using: &rng)
                    let axis = Int.random(in: 0..<rank, using: &rng)
                    let x = trial == 2 ? broadcastOperand(T.self, shape, using: &rng) : operand(T.self, kind, shape)
                    let indicesShape = shape.enumerated().map { d, n in
                        d == axis
                            ? Int.random(in: 0...4, using: &rng) : Int.random(in: (trial == 3 ? 0 : 1)...n, using: &rng)
                    }
                    let indices = randomIndices(indicesShape.reduce(1, *), axisSize: shape[axis], using: &rng)
                    let expected = NaiveCopy.gatherElements(
                        x.logicalElements, shape: shape, axis: axis, indices: indices, indicesShape: indicesShape)
                    let got = withRaw(x.storage) { src in
                        withRaw(indices) { idx in
                            output(T.self, count: expected.count) { dst in
                                CopyKernels.gatherElements(
                                    from: src, layout: x.layout, axis: axis,
                                    indices: idx.assumingMemoryBound(to: Int32.self),
                                    indicesShape: indicesShape, elementSize: MemoryLayout<T>.stride, to: dst)
                            }
                        }
                    }
                    #expect(got == expected, "\(T.self) \(x.layout) axis \(axis) indices \(indices) \(indicesShape)")
                }
            }
        }
    }

    @Test("scatterElements replace keeps the last duplicate; strided updates", arguments: LayoutKind.allCases)
    func scatterReplace(kind: LayoutKind) {
        var rng = SeededRandom(seed: 33)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 1...4 {
                for _ in 0..<4 {
                    let shape = randomShape(rank: rank, allowZero: false, using: &rng)
                    let axis = Int.random(in: 0..<rank, using: &rng)
                    let indicesShape = shape.enumerated().map { d, n in
                        d == axis ? Int.random(in: 0...6, using: &rng) : Int.random(in: 1...n, using: &rng)
                    }
                    let indices = randomIndices(indicesShape.reduce(1, *), axisSize: shape[axis], using: &rng)
                    let data = (0..<shape.reduce(1, *)).map { T.make(5000 + $0) }
                    let updates = operand(T.self, kind, indicesShape)
                    let expected = NaiveCopy.scatterElements(
                        data, shape: shape, axis: axis, indices: indices, indicesShape: indicesShape,
                        updates: updates.logicalElements)
                    let got = withRaw(updates.storage) { upd in
                        withRaw(indices) { idx in
                            output(T.self, count: data.count, initial: data) { dst in
                                CopyKernels.scatterElements(
                                    into: dst, shape: shape, axis: axis,
                                    indices: idx.assumingMemoryBound(to: Int32.self),
                                    indicesShape: indicesShape, updates: upd, updatesLayout: updates.layout,
                                    elementSize: MemoryLayout<T>.stride, mode: .replace)
                            }
                        }
                    }
                    #expect(got == expected, "\(T.self) \(shape) axis \(axis) indices \(indices) \(indicesShape)")
                }
            }
        }
    }

    @Test("scatterElements add accumulates duplicates (float32), serially and in parallel blocks")
    func scatterAdd() {
        var rng = SeededRandom(seed: 34)
        for (shape, axis, indicesShape) in [
            ([5], 0, [12]), ([3, 4], 1, [3, 9]), ([2, 3, 4], 0, [6, 3, 4]), ([300, 8, 16], 1, [300, 20, 16]),
        ] {
            let indices = randomIndices(indicesShape.reduce(1, *), axisSize: shape[axis], using: &rng)
            let data = (0..<shape.reduce(1, *)).map { Float($0 % 7) }
            let updates = (0..<indicesShape.reduce(1, *)).map { Float($0 % 5) + 0.5 }
            let expected = NaiveCopy.scatterElements(
                data, shape: shape, axis: axis, indices: indices, indicesShape: indicesShape, updates: updates,
                combine: +)
            let got = withRaw(updates) { upd in
                withRaw(indices) { idx in
                    output(Float.self, count: data.count, initial: data) { dst in
                        CopyKernels.scatterElements(
                            into: dst, shape: shape, axis: axis, indices: idx.assumingMemoryBound(to: Int32.self),
                            indicesShape: indicesShape, updates: upd,
                            updatesLayout: StridedLayout(contiguous: indicesShape),
                            elementSize: 4, mode: .add, scalarType: .float32)
                    }
                }
            }
            expectSameElements(got, expected, "\(shape) axis \(axis)")
        }
    }

    @Test("an out-of-range gather index traps, naming the op, the index and the axis size")
    func gatherOutOfRangeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let x: [Float] = [1, 2, 3]
            let idx: [Int32] = [0, 3]
            x.withUnsafeBytes { src in
                idx.withUnsafeBufferPointer { i in
                    var out = [Float](repeating: 0, count: 2)
                    out.withUnsafeMutableBytes { dst in
                        CopyKernels.gather(
                            from: src.baseAddress!, layout: StridedLayout(contiguous: [3]), axis: 0,
                            indices: i.baseAddress!,
                            indicesShape: [2], elementSize: 4, to: dst.baseAddress!)
                    }
                }
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("[gather] index 3 is out of range for axis 0 of size 3"), "\(message)")
    }
}

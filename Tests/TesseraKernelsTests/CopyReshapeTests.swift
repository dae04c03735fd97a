import TesseraKernels
import Testing
import _TesseraTestSupport

@Suite("Copy: concatenate, split, tile")
struct CopyConcatTests {
    @Test("concatenate matches NumPy for mixed layouts, zero-size pieces and every element size")
    func concatenate() {
        var rng = SeededRandom(seed: 10)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 1...5 {
                for _ in 0..<4 {
                    let base = randomShape(rank: rank, allowZero: true, using: &rng)
                    let axis = Int.random(in: 0..<rank, using: &rng)
                    var parts: [StridedStorage<T>] = []
                    for _ in 0..<Int.random(in: 1...3, using: &rng) {
                        var shape = base
                        shape[axis] = Int.random(in: 0...3, using: &rng)
                        if Int.random(in: 0..<4, using: &rng) == 0 {
                            parts.append(broadcastOperand(T.self, shape, using: &rng))
                        } else {
                            parts.append(operand(T.self, LayoutKind.allCases.randomElement(using: &rng)!, shape))
                        }
                    }
                    let expected = NaiveCopy.concatenate(
                        parts.map { ($0.logicalElements, $0.layout.shape) }, axis: axis)
                    let got = withRawAll(parts.map(\.storage)) { pointers in
                        output(T.self, count: expected.elements.count) { dst in
                            CopyKernels.concatenate(
                                inputs: zip(pointers, parts).map { ($0, $1.layout) },
                                axis: axis - (Bool.random(using: &rng) ? rank : 0),
                                elementSize: MemoryLayout<T>.stride, to: dst)
                        }
                    }
                    #expect(got == expected.elements, "\(T.self) axis \(axis) \(parts.map(\.layout))")
                }
            }
        }
    }

    @Test("concatenating two [32, 64, 64] on axis 0 (one parallel run per input)")
    func concatenateMedium() {
        let a = operand(Float.self, .contiguous, [32, 64, 64])
        let b = operand(Float.self, .contiguous, [32, 64, 64])
        let got = withRawAll([a.storage, b.storage]) { p in
            output(Float.self, count: 2 * 32 * 64 * 64) { dst in
                CopyKernels.concatenate(inputs: [(p[0], a.layout), (p[1], b.layout)], axis: 0, elementSize: 4, to: dst)
            }
        }
        expectSameElements(got, a.storage + b.storage, "concat")
    }

    @Test("split matches NumPy", arguments: LayoutKind.allCases)
    func split(kind: LayoutKind) {
        var rng = SeededRandom(seed: 11)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 1...5 {
                for _ in 0..<3 {
                    let shape = randomShape(rank: rank, sizes: 1...5, allowZero: true, using: &rng)
                    let axis = Int.random(in: 0..<rank, using: &rng)
                    var sizes: [Int] = []
                    var left = shape[axis]
                    while left > 0 {
                        let size = Int.random(in: 0...left, using: &rng)
                        sizes.append(size)
                        left -= size
                    }
                    sizes.append(0)
                    let x = operand(T.self, kind, shape)
                    let pieceCounts = sizes.map { size -> Int in
                        var s = shape
                        s[axis] = size
                        return s.reduce(1, *)
                    }
                    let expected = NaiveCopy.split(x.logicalElements, shape: shape, axis: axis, sizes: sizes)
                    let buffers = pieceCounts.map {
                        UnsafeMutableRawPointer.allocate(byteCount: max(1, $0) * MemoryLayout<T>.stride, alignment: 64)
                    }
                    defer { for buffer in buffers { buffer.deallocate() } }
                    withRaw(x.storage) { src in
                        CopyKernels.split(
                            from: src, layout: x.layout, axis: axis, sizes: sizes, elementSize: MemoryLayout<T>.stride,
                            to: buffers)
                    }
                    for (piece, count) in pieceCounts.enumerated() {
                        let got = (0..<count).map {
                            buffers[piece].load(fromByteOffset: $0 * MemoryLayout<T>.stride, as: T.self)
                        }
                        #expect(
                            got == expected[piece], "\(T.self) \(x.layout) axis \(axis) sizes \(sizes) piece \(piece)")
                    }
                }
            }
        }
    }

    @Test("tile matches NumPy, rank 0-4, broadcast inputs and zero multiples", arguments: LayoutKind.allCases)
    func tile(kind: LayoutKind) {
        var rng = SeededRandom(seed: 12)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 0...4 {
                for trial in 0..<4 {
                    let shape = randomShape(rank: rank, sizes: 1...3, allowZero: true, using: &rng)
                    let x = trial == 3 ? broadcastOperand(T.self, shape, using: &rng) : operand(T.self, kind, shape)
                    let multiples = (0..<rank).map { _ in
                        Int.random(in: 0...3, using: &rng) == 0 ? 0 : Int.random(in: 1...3, using: &rng)
                    }
                    let expected = NaiveCopy.tile(x.logicalElements, shape: shape, multiples: multiples)
                    let got = withRaw(x.storage) { src in
                        output(T.self, count: expected.count) { dst in
                            CopyKernels.tile(
                                from: src, layout: x.layout, multiples: multiples, elementSize: MemoryLayout<T>.stride,
                                to: dst)
                        }
                    }
                    #expect(got == expected, "\(T.self) \(x.layout) multiples \(multiples)")
                }
            }
        }
    }
}

/// Runs `body` with private copies of several arrays.
func withRawAll<T, R>(_ arrays: [[T]], _ body: ([UnsafeRawPointer]) -> R) -> R {
    let pointers = arrays.map { array -> UnsafeMutableRawPointer in
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(1, array.count) * MemoryLayout<T>.stride, alignment: 64)
        array.withUnsafeBytes { if let base = $0.baseAddress { p.copyMemory(from: base, byteCount: $0.count) } }
        return p
    }
    defer { for pointer in pointers { pointer.deallocate() } }
    return body(pointers.map { UnsafeRawPointer($0) })
}

@Suite("Copy: pad")
struct CopyPadTests {
    @Test(
        "pad matches NumPy in every mode, layout kind and element size",
        arguments: [PadMode.constant(bitPattern: 0), .reflect, .symmetric, .edge])
    func pad(mode: PadMode) {
        var rng = SeededRandom(seed: 20)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            let fillValue = T.make(999)
            var bits: UInt64 = 0
            withUnsafeBytes(of: fillValue) { bytes in
                for (i, byte) in bytes.enumerated() { bits |= UInt64(byte) << (8 * UInt64(i)) }
            }
            let kernelMode: PadMode = mode == .constant(bitPattern: 0) ? .constant(bitPattern: bits) : mode
            let naiveMode: NaiveCopy.Mode<T>
            switch mode {
            case .constant: naiveMode = .constant(fillValue)
            case .reflect: naiveMode = .reflect
            case .symmetric: naiveMode = .symmetric
            case .edge: naiveMode = .edge
            }
            for rank in 0...4 {
                for trial in 0..<5 {
                    let allowZero = mode == .constant(bitPattern: 0)
                    let shape = randomShape(rank: rank, sizes: 1...5, allowZero: allowZero, using: &rng)
                    let kind = LayoutKind.allCases[trial % 4]
                    let x = trial == 4 ? broadcastOperand(T.self, shape, using: &rng) : operand(T.self, kind, shape)
                    let padding = shape.map { n -> (Int, Int) in
                        let limit: Int
                        switch mode {
                        case .constant: limit = 3
                        case .reflect: limit = n - 1
                        case .symmetric: limit = n
                        case .edge: limit = n == 0 ? 0 : 3
                        }
                        return (Int.random(in: 0...limit, using: &rng), Int.random(in: 0...limit, using: &rng))
                    }
                    let expected = NaiveCopy.pad(x.logicalElements, shape: shape, padding: padding, mode: naiveMode)
                    let got = withRaw(x.storage) { src in
                        output(T.self, count: expected.count) { dst in
                            CopyKernels.pad(
                                from: src, layout: x.layout, elementSize: MemoryLayout<T>.stride,
                                padding: padding.map { (before: $0.0, after: $0.1) }, mode: kernelMode, to: dst)
                        }
                    }
                    #expect(got == expected, "\(T.self) \(mode) \(x.layout) padding \(padding)")
                }
            }
        }
    }

    @Test("pad's NumPy examples: reflect, symmetric and edge on [1, 2, 3, 4]")
    func padExamples() {
        func run(_ mode: PadMode) -> [Int32] {
            withRaw([1, 2, 3, 4] as [Int32]) { src in
                output(Int32.self, count: 8) { dst in
                    CopyKernels.pad(
                        from: src, layout: StridedLayout(contiguous: [4]), elementSize: 4, padding: [(2, 2)],
                        mode: mode,
                        to: dst)
                }
            }
        }
        #expect(run(.constant(bitPattern: 9)) == [9, 9, 1, 2, 3, 4, 9, 9])
        #expect(run(.reflect) == [3, 2, 1, 2, 3, 4, 3, 2])
        #expect(run(.symmetric) == [2, 1, 1, 2, 3, 4, 4, 3])
        #expect(run(.edge) == [1, 1, 1, 2, 3, 4, 4, 4])
    }

    @Test("a medium image pad ([4, 3, 64, 64] by 3 on H and W) runs in parallel chunks")
    func padMedium() {
        let x = operand(Float.self, .contiguous, [4, 3, 64, 64])
        let padding = [(0, 0), (0, 0), (3, 3), (3, 3)]
        for (mode, naive) in [
            (PadMode.reflect, NaiveCopy.Mode<Float>.reflect), (.constant(bitPattern: 0), .constant(0)),
        ] {
            let expected = NaiveCopy.pad(x.storage, shape: [4, 3, 64, 64], padding: padding, mode: naive)
            let got = withRaw(x.storage) { src in
                output(Float.self, count: expected.count) { dst in
                    CopyKernels.pad(
                        from: src, layout: x.layout, elementSize: 4,
                        padding: padding.map { (before: $0.0, after: $0.1) },
                        mode: mode, to: dst)
                }
            }
            expectSameElements(got, expected, "\(mode)")
        }
    }
}

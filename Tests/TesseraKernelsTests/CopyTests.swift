import TesseraKernels
import Testing
import _TesseraTestSupport

/// Materialises `storage` with `CopyKernels.copy`.
func kernelCopy<T>(_ storage: StridedStorage<T>) -> [T] {
    withRaw(storage.storage) { src in
        output(T.self, count: storage.layout.count) { dst in
            CopyKernels.copy(from: src, layout: storage.layout, elementSize: MemoryLayout<T>.stride, to: dst)
        }
    }
}

@Suite("Copy: strided views")
struct CopyStridedTests {
    @Test(
        "copy matches a naive gather for every layout kind, rank 0-5, every element size",
        arguments: LayoutKind.allCases)
    func copyEveryLayout(kind: LayoutKind) {
        var rng = SeededRandom(seed: 1)
        for type in allSizeTypes { check(type, kind, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ kind: LayoutKind, _ rng: inout SeededRandom) {
            for rank in 0...5 {
                for _ in 0..<4 {
                    let shape = randomShape(rank: rank, allowZero: true, using: &rng)
                    let x = operand(T.self, kind, shape)
                    #expect(kernelCopy(x) == x.logicalElements, "\(T.self) \(kind) \(x.layout)")
                }
            }
        }
    }

    @Test("copy materialises broadcasts (stride 0), including an inner broadcast dimension")
    func copyBroadcast() {
        var rng = SeededRandom(seed: 2)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 0...5 {
                for _ in 0..<6 {
                    let shape = randomShape(rank: rank, sizes: 1...5, allowZero: true, using: &rng)
                    let x = broadcastOperand(T.self, shape, using: &rng)
                    #expect(kernelCopy(x) == x.logicalElements, "\(T.self) \(x.layout)")
                }
            }
            let scalar = StridedStorage(
                storage: [T.make(9)], layout: StridedLayout(contiguous: []).broadcast(to: [3, 70]))
            #expect(kernelCopy(scalar) == [T](repeating: T.make(9), count: 210))
        }
    }

    @Test("copy of random permutations, slices with steps and reversed axes")
    func copyPermutedAndSliced() {
        var rng = SeededRandom(seed: 3)
        for type in allSizeTypes { check(type, &rng) }

        func check<T: CopyTestElement>(_ type: T.Type, _ rng: inout SeededRandom) {
            for rank in 1...5 {
                for _ in 0..<5 {
                    let shape = randomShape(rank: rank, sizes: 1...6, allowZero: false, using: &rng)
                    let kind: LayoutKind = Bool.random(using: &rng) ? .contiguous : .padded
                    var x = operand(T.self, kind, shape)
                    let permutation = Array(0..<rank).shuffled(using: &rng)
                    x.layout = x.layout.permuted(permutation)
                    #expect(kernelCopy(x) == x.logicalElements, "\(T.self) \(x.layout)")
                    // Every other element along one axis, walked backwards from the end.
                    var sliced = operand(T.self, .contiguous, shape)
                    let axis = Int.random(in: 0..<rank, using: &rng)
                    let n = shape[axis]
                    sliced.layout.offset += (n - 1) * sliced.layout.strides[axis]
                    sliced.layout.shape[axis] = (n + 1) / 2
                    sliced.layout.strides[axis] *= -2
                    #expect(kernelCopy(sliced) == sliced.logicalElements, "\(T.self) \(sliced.layout)")
                }
            }
        }
    }

    @Test("a 300 x 517 transpose crosses tile edges and runs in parallel chunks")
    func bigTranspose() {
        check(Float.self)
        check(UInt8.self)
        check(Double.self)
        check(Int16.self)

        func check<T: CopyTestElement>(_ type: T.Type) {
            let x = operand(T.self, .transposed, [300, 517])
            // The storage is a row-major [517, 300] matrix, so out[i][j] = storage[j * 300 + i]
            // (written out directly: the generic naive gather is slow in debug builds).
            var expected: [T] = []
            expected.reserveCapacity(300 * 517)
            for i in 0..<300 {
                for j in 0..<517 { expected.append(x.storage[j * 300 + i]) }
            }
            expectSameElements(kernelCopy(x), expected, "\(T.self)")
        }
    }

    @Test("4-byte transposes whose row strides are multiples of 1 KiB take the buffered path, edges included")
    func bufferedTranspose() {
        for shape in [[256, 83], [70, 512], [256, 256], [1024, 19]] {
            let x = operand(Float.self, .transposed, shape)
            expectSameElements(kernelCopy(x), x.logicalElements, "\(shape)")
        }
    }

    @Test("batched transposes: [3, 37, 70] permuted, and a transpose of a padded view")
    func batchedTranspose() {
        let base = operand(Float.self, .contiguous, [3, 37, 70])
        for permutation in [[0, 2, 1], [2, 1, 0], [1, 2, 0], [2, 0, 1]] {
            var x = base
            x.layout = x.layout.permuted(permutation)
            #expect(kernelCopy(x) == x.logicalElements, "\(permutation)")
        }
        var padded = operand(Int32.self, .padded, [33, 65])
        padded.layout = padded.layout.permuted([1, 0])
        #expect(kernelCopy(padded) == padded.logicalElements)
    }

    @Test("a medium contiguous copy splits across threads")
    func contiguousParallel() {
        let x = operand(Float.self, .contiguous, [1 << 18])
        expectSameElements(kernelCopy(x), x.storage, "[1 << 18]")
    }

    @Test("permute writes the permuted view")
    func permute() {
        let x = operand(Float16.self, .contiguous, [2, 3, 4, 5])
        let got = withRaw(x.storage) { src in
            output(Float16.self, count: 120) { dst in
                CopyKernels.permute(from: src, layout: x.layout, permutation: [0, 2, 3, 1], elementSize: 2, to: dst)
            }
        }
        #expect(got == NaiveLayout.gather(x.storage, x.layout.permuted([0, 2, 3, 1])))
    }
}

@Suite("Copy: fill")
struct CopyFillTests {
    @Test("fill writes the low bytes of the bit pattern", arguments: [0, 1, 5, 1000, 300_000])
    func fill(count: Int) {
        #expect(
            output(UInt8.self, count: count) {
                CopyKernels.fill($0, count: count, elementSize: 1, bitPattern: 0xFFFF_FF7F)
            } == [UInt8](repeating: 0x7F, count: count))
        #expect(
            output(Float16.self, count: count) {
                CopyKernels.fill($0, count: count, elementSize: 2, bitPattern: UInt64(Float16(-2.5).bitPattern))
            } == [Float16](repeating: -2.5, count: count))
        #expect(
            output(Float.self, count: count) {
                CopyKernels.fill($0, count: count, elementSize: 4, bitPattern: UInt64(Float(1.5).bitPattern))
            } == [Float](repeating: 1.5, count: count))
        #expect(
            output(Float.self, count: count) {
                CopyKernels.fill($0, count: count, elementSize: 4, bitPattern: 0)
            } == [Float](repeating: 0, count: count))
        #expect(
            output(Double.self, count: count) {
                CopyKernels.fill($0, count: count, elementSize: 8, bitPattern: Double.pi.bitPattern)
            } == [Double](repeating: .pi, count: count))
    }
}

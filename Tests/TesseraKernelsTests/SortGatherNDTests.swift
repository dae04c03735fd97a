import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// The stable order of a line: ascending, or descending, with ties by index.
private func naiveOrder(_ line: [Float], descending: Bool) -> [Int32] {
    line.indices.sorted { a, b in
        if line[a] != line[b] { return descending ? line[a] > line[b] : line[a] < line[b] }
        return a < b
    }.map { Int32($0) }
}

@Suite("Sort, gather-nd, NMS and random kernels on raw buffers")
struct SortGatherNDTests {
    @Test("argsort and its first k positions match a naive stable sort on every layout", arguments: LayoutKind.allCases)
    func argsortLayouts(_ kind: LayoutKind) {
        let shape = [3, 5, 7]
        // Values 0..<4: many ties.
        let operand = kind.make(shape: shape) { Float(($0 * 7) % 4) }
        let logical = NaiveLayout.gather(operand.storage, operand.layout)
        for axis in 0..<3 {
            for descending in [false, true] {
                for k in [shape[axis], 2] {
                    var outShape = shape
                    outShape[axis] = k
                    var out = [Int32](repeating: -1, count: outShape.reduce(1, *))
                    operand.storage.withUnsafeBytes { source in
                        out.withUnsafeMutableBufferPointer { destination in
                            SortKernels.argsort(
                                input: source.baseAddress!, layout: operand.layout, type: .float32, axis: axis,
                                descending: descending, count: k, output: destination.baseAddress!)
                        }
                    }
                    for index in NaiveLayout.indices(of: outShape) where index[axis] == 0 {
                        let line = (0..<shape[axis]).map { i -> Float in
                            var position = index
                            position[axis] = i
                            return logical[NaiveLayout.linear(position, in: shape)]
                        }
                        let expected = Array(naiveOrder(line, descending: descending).prefix(k))
                        let got = (0..<k).map { j -> Int32 in
                            var position = index
                            position[axis] = j
                            return out[NaiveLayout.linear(position, in: outShape)]
                        }
                        #expect(got == expected, "\(kind) axis \(axis) descending \(descending) k \(k) at \(index)")
                    }
                }
            }
        }
    }

    @Test("the heap path (k ≪ n) matches the full sort, with ties and NaN")
    func heapPath() {
        let n = 300
        var values = (0..<(2 * n)).map { Float(($0 * 37) % 23) }
        values[17] = .nan
        values[n + 200] = .nan
        for descending in [true, false] {
            var out = [Int32](repeating: -1, count: 2 * 9)
            values.withUnsafeBytes { source in
                out.withUnsafeMutableBufferPointer { destination in
                    SortKernels.argsort(
                        input: source.baseAddress!, layout: StridedLayout(contiguous: [2, n]), type: .float32,
                        axis: 1, descending: descending, count: 9, output: destination.baseAddress!)
                }
            }
            for row in 0..<2 {
                let line = Array(values[(row * n)..<((row + 1) * n)])
                // NaN above every number: it leads a descending order and ends an ascending one.
                let key = line.map { $0.isNaN ? Float.infinity * 2 : $0 }
                let ordered = line.indices.sorted { a, b in
                    let (x, y) = (line[a].isNaN ? 1 : 0, line[b].isNaN ? 1 : 0)
                    if x != y { return descending ? x > y : x < y }
                    if key[a] != key[b] { return descending ? key[a] > key[b] : key[a] < key[b] }
                    return a < b
                }
                #expect(Array(out[(row * 9)..<((row + 1) * 9)]) == ordered.prefix(9).map { Int32($0) })
            }
        }
    }

    @Test("the heap path when the first kept element is NaN")
    func heapStartsWithNaN() {
        let values: [Float] = [.nan] + (1...39).map { Float(40 - $0) }  // NaN, 39, 38, ..., 1
        for (descending, expected) in [(false, [Int32(39), 38]), (true, [Int32(0), 1])] {
            var out = [Int32](repeating: -1, count: 2)
            values.withUnsafeBytes { source in
                out.withUnsafeMutableBufferPointer {
                    SortKernels.argsort(
                        input: source.baseAddress!, layout: StridedLayout(contiguous: [40]), type: .float32, axis: 0,
                        descending: descending, count: 2, output: $0.baseAddress!)
                }
            }
            #expect(out == expected, "descending \(descending)")
        }
    }

    @Test("argsort of integer and float16 lines")
    func otherTypes() {
        let ints: [Int32] = [3, -1, 3, 7, -1]
        var out = [Int32](repeating: 0, count: 5)
        ints.withUnsafeBytes { source in
            out.withUnsafeMutableBufferPointer {
                SortKernels.argsort(
                    input: source.baseAddress!, layout: StridedLayout(contiguous: [5]), type: .int32, axis: 0,
                    descending: true, count: 5, output: $0.baseAddress!)
            }
        }
        #expect(out == [3, 0, 2, 1, 4])
        let halves: [Float16] = [0.5, -2, 0.5, 1]
        var halfOut = [Int32](repeating: 0, count: 4)
        halves.withUnsafeBytes { source in
            halfOut.withUnsafeMutableBufferPointer {
                SortKernels.argsort(
                    input: source.baseAddress!, layout: StridedLayout(contiguous: [4]), type: .float16, axis: 0,
                    descending: false, count: 4, output: $0.baseAddress!)
            }
        }
        #expect(halfOut == [1, 0, 2, 3])
    }

    @Test("gatherND picks elements and slices, negative indices from the end")
    func gatherND() {
        let x = (0..<24).map { Float($0) }  // [2, 3, 4]
        let indices: [Int32] = [1, -1, 0, 2]  // two vectors of length 2 -> slices of [4]
        var out = [Float](repeating: 0, count: 8)
        x.withUnsafeBytes { source in
            indices.withUnsafeBufferPointer { index in
                out.withUnsafeMutableBytes { destination in
                    CopyKernels.gatherND(
                        from: source.baseAddress!, shape: [2, 3, 4], indices: index.baseAddress!, indicesShape: [2, 2],
                        elementSize: 4, to: destination.baseAddress!)
                }
            }
        }
        #expect(out == [20, 21, 22, 23, 8, 9, 10, 11])
    }

    @Test("NMS: duplicates suppressed, disjoint boxes kept in score order, the cap and the score floor")
    func nonMaximumSuppression() {
        let boxes: [Float] = [
            0, 0, 10, 10,  // 0
            0, 0, 10, 10,  // 1: duplicate of 0, higher score
            20, 20, 30, 30,  // 2: disjoint
            1, 1, 11, 11,  // 3: IoU with 1 = 81 / 119 ≈ 0.68
            40, 40, 50, 50,  // 4: disjoint, low score
        ]
        let scores: [Float] = [0.5, 0.9, 0.7, 0.8, 0.1]
        func run(_ iou: Float, _ maxCount: Int, _ floor: Float) -> [Int32] {
            var out = [Int32](repeating: 99, count: maxCount)
            out.withUnsafeMutableBufferPointer { destination in
                _ = NMSKernels.nonMaximumSuppression(
                    boxes: boxes, scores: scores, count: 5, iouThreshold: iou, scoreThreshold: floor,
                    maxOutputCount: maxCount, output: destination.baseAddress!)
            }
            return out
        }
        #expect(run(0.5, 6, -.infinity) == [1, 2, 4, -1, -1, -1])
        #expect(run(0.7, 6, -.infinity) == [1, 3, 2, 4, -1, -1])
        #expect(run(0.5, 2, -.infinity) == [1, 2])
        #expect(run(0.5, 4, 0.2) == [1, 2, -1, -1])
    }

    @Test("random values depend on the seed and the index only, not on threads")
    func randomIsThreadIndependent() {
        var short = [Double](repeating: 0, count: 10)
        var long = [Double](repeating: 0, count: 200_000)
        short.withUnsafeMutableBufferPointer { RandomKernels.normal(seed: 9, count: 10, output: $0.baseAddress!) }
        long.withUnsafeMutableBufferPointer { RandomKernels.normal(seed: 9, count: 200_000, output: $0.baseAddress!) }
        #expect(Array(long.prefix(10)) == short)
        var ints = [Int64](repeating: 0, count: 1000)
        ints.withUnsafeMutableBufferPointer {
            RandomKernels.integers(seed: 3, count: 1000, lower: .min, upper: .max, output: $0.baseAddress!)
        }
        #expect(Set(ints).count == 1000)
    }
}

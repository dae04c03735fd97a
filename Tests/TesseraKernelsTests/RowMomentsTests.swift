import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// ``RowMoments``: a row's sum and its squared deviations from a centre, bit for bit what the
/// sum reduction gives over the row and over the squares written out.
@Suite("Row moments")
struct RowMomentsTests {
    @Test(
        "the sums match the sum reduction of the row and of its written-out squares",
        arguments: [1, 15, 16, 63, 64, 100, 768, 1029])
    func matchesReduction(count: Int) {
        var rng = SeededRandom(seed: UInt64(count))
        let row = (0..<count).map { _ in Float.random(in: -3...5, using: &rng) }
        let center: Float = 0.7
        let squares = row.map { x -> Float in
            let d = x - center
            return d * d
        }
        func reducedSum(_ values: [Float]) -> Float {
            var result: Float = .nan
            values.withUnsafeBytes { input in
                withUnsafeMutableBytes(of: &result) { output in
                    ReductionKernels.reduce(
                        .sum, input: input.baseAddress!, layout: StridedLayout(contiguous: [count]), type: .float32,
                        axes: [0], output: output.baseAddress!, outputType: .float32)
                }
            }
            return result
        }
        row.withUnsafeBufferPointer { p in
            let sum = RowMoments.sum(p.baseAddress!, count: count)
            let centered = RowMoments.centeredSquareSum(p.baseAddress!, count: count, center: center)
            let portable = RowMoments.portableCenteredSquareSum(p.baseAddress!, count: count, center: center)
            #expect(sum.bitPattern == reducedSum(row).bitPattern)
            #expect(centered.bitPattern == reducedSum(squares).bitPattern)
            #expect(portable.bitPattern == centered.bitPattern)
        }
        #expect(RowMoments.mean(sum: 10, count: 3) == Float(10.0 / 3.0))
    }
}

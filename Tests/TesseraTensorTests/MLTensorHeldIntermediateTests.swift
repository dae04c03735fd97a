import Testing
import _TesseraTestSupport

@testable import TesseraTensor

/// Reading several results one `await` at a time: what one materialization computes on the way
/// and the caller still holds is recorded, so the next read does not compute it again.
@Suite("Held intermediates")
struct MLTensorHeldIntermediateTests {
    static let logits = MLTensor(
        shape: [2, 40], scalars: (0..<80).map { Float(($0 * 37) % 41) / 8 - 2.5 } as [Float])

    @Test("topK's indices and values, held by the caller, come out of the cumulative sum's run")
    func heldTopKOutputsAreRecorded() async {
        let (values, indices) = Self.logits.softmax(alongAxis: -1).topK(5)
        let cumulative = await values.cumulativeSum(alongAxis: -1).shapedArray(of: Float.self)
        #expect(indices.isMaterialized)
        #expect(values.isMaterialized)
        // The recorded values are the ones a fresh graph computes.
        let (freshValues, freshIndices) = Self.logits.softmax(alongAxis: -1).topK(5)
        let heldIndices = await indices.shapedArray(of: Int32.self).scalars
        let heldValues = await values.shapedArray(of: Float.self).scalars
        let expectedValues = await freshValues.shapedArray(of: Float.self).scalars
        #expect(heldIndices == (await freshIndices.shapedArray(of: Int32.self).scalars))
        #expect(heldValues == expectedValues)
        var running: Float = 0
        var expected: [Float] = []
        for (i, v) in expectedValues.enumerated() {
            running = i % 5 == 0 ? v : running + v
            expected.append(running)
        }
        #expect(firstMismatch(cumulative.scalars, expected, rtol: 1e-6, atol: 1e-7) == nil)
    }

    @Test("an intermediate only the graph reads is not held: its buffer is still reused in place")
    func temporaryIntermediatesAreNotHeld() {
        let x = MLTensor(shape: [4096], scalars: (0..<4096).map { Float($0 % 7) } as [Float])
        let temporary = MLTensor.materialize([x.cumulativeSum(alongAxis: 0) * 2 + 1])
        #expect(temporary.inPlaceSteps == 1, "\(temporary)")
        let held = x.cumulativeSum(alongAxis: 0)
        let statistics = MLTensor.materialize([held * 2 + 1])
        #expect(statistics.inPlaceSteps == 0, "\(statistics)")
        #expect(held.isMaterialized)
    }

    @Test("a held intermediate is never written over in place by a later step")
    func heldIntermediateKeepsItsElements() {
        // Whole numbers, so every running sum is exact in float32 whatever the order.
        let x = MLTensor(shape: [4096], scalars: (0..<4096).map { Float($0 % 7) } as [Float])
        let held = x.cumulativeSum(alongAxis: 0)
        // The element-wise step after the scan could otherwise reuse the scan's dying buffer.
        let y = (held * 2 + 1).materialized()
        var running: Float = 0
        let expected = (0..<4096).map { i -> Float in
            running += Float(i % 7)
            return running
        }
        #expect(held.isMaterialized)
        #expect(held.scalars(of: Float.self) == expected)
        #expect(y.scalars(of: Float.self) == expected.map { $0 * 2 + 1 })
    }
}

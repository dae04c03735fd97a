import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// One lowered function shared by concurrent predictions.
@Suite("Lowering concurrency")
struct LoweringConcurrencyTests {
    @Test("concurrent predictions on one lowered function all match the reference")
    func concurrentPredictions() async throws {
        let fixture = try #require(LoweringFixture.named("transformer_block"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        let inputs = try fixture.inputTensors()
        let expected = try fixture.expected(0).floats
        let output = fixture.outputs[0]
        let results = try await withThrowingTaskGroup(of: [Float].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let outputs = try function.run(inputs)
                    let y = try #require(outputs[output])
                    await MLTensor.materialize([y])
                    return await y.scalars(of: Float.self)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        for got in results {
            #expect(firstMismatch(got, expected, rtol: fixture.rtol, atol: fixture.atol) == nil)
        }
    }
}

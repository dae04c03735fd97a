import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Stateful functions (iOS 18) under the contract in `State/MLState.swift`: each state's
/// current value comes in under its name, the value the function wrote goes out under it.
@Suite("Lowering states")
struct LoweringStateTests {
    @Test("a state is an input and its written value an output of its declared type; feeding it back accumulates")
    func accumulator() throws {
        let fixture = try #require(LoweringFixture.named("stateful_accumulator"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        guard case .state? = function.inputs.first(where: { $0.name == "acc" })?.type else {
            Issue.record("the state is not among the inputs: \(function.inputs.map(\.name))")
            return
        }
        #expect(!function.outputNames.contains("acc"))
        var inputs = try fixture.inputTensors()
        let x = inputs["x"]!.scalars(of: Float.self)
        var expected = inputs["acc"]!.scalars(of: Float.self)
        for _ in 0..<3 {
            let outputs = try function.run(inputs)
            let state = try #require(outputs["acc"])
            #expect(state.scalarType is Float16.Type)
            expected = zip(expected, x).map { Float(Float16($0 + $1)) }
            #expect(firstMismatch(state.scalars(of: Float.self), expected, rtol: 1e-3, atol: 1e-3) == nil)
            inputs["acc"] = state
        }
    }

    @Test("a prediction without the state's value throws")
    func missingState() throws {
        let fixture = try #require(LoweringFixture.named("stateful_accumulator"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        var inputs = try fixture.inputTensors()
        inputs["acc"] = nil
        #expect(throws: LoweringError.self) { try function.run(inputs) }
    }
}

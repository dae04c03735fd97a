import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The cases `tools/make_new_op_fixtures.py` writes to `Tests/Fixtures/new-ops/`: MIL programs
/// using the ops added as registrations, read as ``LoweringFixture``s.
enum NewOpFixture {
    /// Every case in `new-ops/cases.json`.
    static let all = LoweringFixture.load("new-ops")

    /// The cases whose name starts with `prefix` (not the `invalid_` ones).
    static func cases(_ prefix: String) -> [LoweringFixture] {
        all.filter { $0.name.hasPrefix(prefix) }
    }

    /// The case named `name`.
    static func named(_ name: String) -> LoweringFixture? { all.first { $0.name == name } }
}

extension LoweringFixture {
    /// The case's program, lowered.
    func function() throws -> LoweredFunction {
        try LoweredFunction(package: try package(), functionName: "main")
    }

    /// Lowers and runs the case and compares every output with NumPy's.
    func check() throws {
        let outputs = try function().run(try inputTensors())
        for (index, output) in self.outputs.enumerated() {
            let expected = try expected(index)
            let got = try #require(outputs[output], "no output \(output) among \(outputs.keys.sorted())")
            #expect(got.shape == expected.shape, "\(name) output \(output)")
            let mismatch = firstMismatch(got.scalars(of: Float.self), expected.floats, rtol: rtol, atol: atol)
            #expect(mismatch == nil, "\(name) output \(output): \(mismatch ?? "")")
        }
    }

    /// Lowers the case (which must load) and checks its prediction throws a shape mismatch
    /// naming `opType`.
    func expectShapeMismatch(naming opType: String) throws {
        let function = try function()
        let inputs = try inputTensors()
        #expect {
            try function.run(inputs)
        } throws: { error in
            guard let error = error as? LoweringError else { return false }
            return error.kind == .shapeMismatch && error.message.contains("'\(opType)'")
        }
    }
}

import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Integer constants stored as floating-point numbers (the `compiled` fuzz finding
/// `crash-f037da9b…`): a value that is not finite or beyond Int32 throws; others are rounded
/// toward zero, as before.
@Suite("MIL constants: floating-point values for integer tensors")
struct MILConstantConversionTests {
    static let package: CoreMLPackage = {
        try! CoreMLPackage(contentsOf: Fixtures.url("models/linear_relu_softmax.mlpackage"))
    }()

    static func int32Value(_ storage: MILTensorStorage, count: Int) -> MILValue {
        MILValue(
            type: .tensor(MILTensorType(dataType: .int32, rank: 1, dimensions: [.constant(count)])),
            storage: .immediate(.tensor(storage)))
    }

    @Test(
        "NaN, infinities and values beyond Int32 in a float or double field throw naming the value",
        arguments: [Float.nan, .infinity, -.infinity, 3e9, -3e9])
    func outOfRange(_ value: Float) {
        for storage in [MILTensorStorage.floats([1, value]), .doubles([1, Double(value)])] {
            #expect {
                _ = try MILConstant(Self.int32Value(storage, count: 2), in: Self.package, what: "const x")
            } throws: { error in
                (error as? ModelFormatError)?.message.contains("const x") == true
                    && "\(error)".contains("cannot hold")
            }
        }
    }

    @Test("an integer parameter computed at prediction time that is NaN or huge throws; others truncate")
    func runtimeIntegers() throws {
        for bad: Float in [.nan, .infinity, 3e9] {
            #expect(throws: OperandError.self, "\(bad)") {
                _ = try RuntimeInts.operand(0).values([MLTensor(shape: [2], scalars: [1, bad], scalarType: Float.self)])
            }
        }
        let values = try RuntimeInts.operand(0).values([
            MLTensor(shape: [3], scalars: [2.7, -1, 4], scalarType: Float.self)
        ])
        #expect(values == [2, -1, 4])
    }

    @Test("finite values in range are rounded toward zero")
    func inRange() throws {
        let constant = try MILConstant(
            Self.int32Value(.floats([2.7, -2.7, 2_147_483_520]), count: 3), in: Self.package, what: "const x")
        guard case .ints(let values) = constant.elements else {
            Issue.record("not read as integers: \(constant.elements)")
            return
        }
        #expect(values == [2, -2, 2_147_483_520])
    }
}

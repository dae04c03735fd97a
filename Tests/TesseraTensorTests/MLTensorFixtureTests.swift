import Foundation
import TesseraKernels
import TesseraModels
import Testing
import _TesseraTestSupport

@testable import TesseraTensor

/// One operation checked against a NumPy fixture written by `tools/make_tensor_fixtures.py`.
///
/// The inputs are `Tests/Fixtures/tensor/in_<input>.npy`; the expected result is
/// `tensor/<name>.npy`, or `tensor/<name>_<k>.npy` for operations returning several tensors.
struct FixtureCase: Sendable, CustomTestStringConvertible {
    let name: String
    let inputs: [String]
    let returnsArray: Bool
    let build: @Sendable ([MLTensor]) -> [MLTensor]

    var testDescription: String { name }

    init(_ name: String, _ inputs: String..., build: @escaping @Sendable ([MLTensor]) -> MLTensor) {
        self.name = name
        self.inputs = inputs
        returnsArray = false
        self.build = { [build($0)] }
    }

    init(_ name: String, _ inputs: String..., buildArray: @escaping @Sendable ([MLTensor]) -> [MLTensor]) {
        self.name = name
        self.inputs = inputs
        returnsArray = true
        build = buildArray
    }
}

/// The tensor holding a fixture array, with the matching scalar type.
func fixtureTensor(_ array: NumPyArray) -> MLTensor {
    let values = array.doubles
    switch array.dtype {
    case "<f4": return MLTensor(shape: array.shape, scalars: values.map { Float($0) }, scalarType: Float.self)
    case "<f2": return MLTensor(shape: array.shape, scalars: values.map { Float16($0) }, scalarType: Float16.self)
    case "<f8": return MLTensor(shape: array.shape, scalars: values, scalarType: Double.self)
    case "<i4": return MLTensor(shape: array.shape, scalars: values.map { Int32($0) }, scalarType: Int32.self)
    case "|i1": return MLTensor(shape: array.shape, scalars: values.map { Int8($0) }, scalarType: Int8.self)
    case "|u1": return MLTensor(shape: array.shape, scalars: values.map { UInt8($0) }, scalarType: UInt8.self)
    case "|b1": return MLTensor(shape: array.shape, scalars: values.map { $0 != 0 }, scalarType: Bool.self)
    default: fatalError("no tensor type for dtype \(array.dtype)")
    }
}

/// The kernel scalar type NumPy's dtype string names.
func kernelType(ofDType dtype: String) -> KernelScalarType? {
    ["<f4": .float32, "<f2": .float16, "<f8": .float64, "<i4": .int32, "|i1": .int8, "|u1": .uint8, "|b1": .bool][dtype]
}

/// Builds the case from its input fixtures and compares every result with its expected
/// fixture: shape, scalar type, and values (exact for integers and bools; `rtol`/`atol`
/// 1e-5 for float32 and float64, 2e-3 for float16).
func checkFixture(_ fixture: FixtureCase) async throws {
    let inputs = try fixture.inputs.map { try fixtureTensor(Fixtures.npy("tensor/in_\($0).npy")) }
    let results = fixture.build(inputs)
    let names = fixture.returnsArray ? results.indices.map { "\(fixture.name)_\($0)" } : [fixture.name]
    if fixture.returnsArray {
        let extra = Fixtures.url("tensor/\(fixture.name)_\(results.count).npy").path
        #expect(!FileManager.default.fileExists(atPath: extra), "\(fixture.name): NumPy returns more tensors")
        #expect(
            FileManager.default.fileExists(atPath: Fixtures.url("tensor/\(fixture.name)_0.npy").path) || results.isEmpty
        )
    }
    for (result, name) in zip(results, names) {
        let expected = try Fixtures.npy("tensor/\(name).npy")
        #expect(result.shape == expected.shape, "\(name): shape \(result.shape), expected \(expected.shape)")
        #expect(
            result.kernelType == kernelType(ofDType: expected.dtype),
            "\(name): type \(result.kernelType), expected \(expected.dtype)")
        guard result.shape == expected.shape else { continue }
        let got = await result.scalars(of: Double.self)
        let (rtol, atol): (Double, Double)
        switch result.kernelType {
        case .float16: (rtol, atol) = (2e-3, 2e-3)
        case .float32, .float64: (rtol, atol) = (1e-5, 1e-5)
        default: (rtol, atol) = (0, 0)
        }
        if let mismatch = firstMismatch(got, expected.doubles, rtol: rtol, atol: atol) {
            Issue.record("\(name): \(mismatch)")
        }
    }
}

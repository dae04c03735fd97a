import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// The one `.npy` parser, shared by `NumPyFile` and the test fixtures.
@Suite("NumPyArray: the .npy parser")
struct NumPyArrayTests {
    /// A version-1 file with `header` (padded as NumPy pads it) and `payload`.
    static func file(_ header: String, payload: [UInt8] = []) -> Data {
        var text = header
        text += String(repeating: " ", count: (64 - (10 + text.utf8.count + 1) % 64) % 64) + "\n"
        let length = text.utf8.count
        return Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, UInt8(length & 0xFF), UInt8(length >> 8)])
            + Data(text.utf8) + Data(payload)
    }

    @Test("reads NumPy's int64 and float32 files in their dtype")
    func readsNumPyFiles() throws {
        let integers = try Fixtures.npy("models/api_int64.npy")
        #expect(integers.dtype == "<i8" && integers.shape == [2, 3])
        #expect(try integers.ints == [-2, -1, 0, 1, 2, 3])
        let x = try Fixtures.npy("models/api_x.npy")
        #expect(x.dtype == "<f4" && x.shape == [1, 8] && x.floats.count == 8)
        let expected = try #require(APIExpected.all["linear_relu_softmax"]?.inputs["x"]).values
        #expect(x.floats == expected.map { Float($0) })
    }

    @Test("bool and uint8 bytes, a 0-d array and an empty one")
    func smallDtypes() throws {
        let bools = try NumPyArray(
            data: Self.file("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", payload: [1, 0, 1]))
        #expect(try bools.ints == [1, 0, 1] && bools.shape == [3])
        let scalar = try NumPyArray(
            data: Self.file("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", payload: [200]))
        #expect(scalar.shape == [] && scalar.count == 1 && scalar.doubles == [200])
        let empty = try NumPyArray(data: Self.file("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }"))
        #expect(empty.shape == [0, 4] && empty.doubles.isEmpty)
    }

    @Test("ints rounds floating-point values toward zero and throws for those with no Int")
    func intsFromFloatingPoint() throws {
        func doubles(_ values: [Double]) throws -> NumPyArray {
            let payload = values.flatMap { value in
                (0..<8).map { UInt8(truncatingIfNeeded: value.bitPattern >> (8 * $0)) }
            }
            return try NumPyArray(
                data: Self.file(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (\(values.count),), }", payload: payload),
                name: "values.npy")
        }
        #expect(try doubles([2.9, -1.5, -0.0, 0.999, 1e15]).ints == [2, -1, 0, 0, 1_000_000_000_000_000])
        for bad in [Double.nan, .infinity, -.infinity, 1e300, -1e19] {
            let error = #expect(throws: NumPyFileError.self) { _ = try doubles([1, bad]).ints }
            #expect(error?.description.hasPrefix("values.npy: element 1 of <f8 [2] is ") == true, "\(bad)")
        }
    }

    @Test(
        "malformed headers throw a NumPyFileError naming the file",
        arguments: [
            "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
            "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': 3, }",
            "{'descr': '<f4', 'shape': (1,), }",
        ])
    func malformedHeaders(_ header: String) {
        let error = #expect(throws: NumPyFileError.self) {
            _ = try NumPyArray(data: Self.file(header, payload: [0, 0, 0, 0]), name: "bad.npy")
        }
        #expect(error?.description.hasPrefix("bad.npy: ") == true)
    }
}

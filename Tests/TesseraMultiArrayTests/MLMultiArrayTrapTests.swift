import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

/// Core ML's non-throwing members stop the program on bad input, with a message naming the
/// call; nothing reads out of bounds.
@Suite("MLMultiArray traps")
struct MLMultiArrayTrapTests {
    /// Checks that the exit test's standard error contains `phrase`.
    private func expectMessage(_ result: ExitTest.Result?, _ phrase: String) {
        let message = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(message.contains(phrase), "\(message)")
    }

    @Test("concatenating arrays whose shapes differ off the axis")
    func concatenationShapes() async {
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let a = try MLMultiArray(shape: [2, 3], dataType: .float32)
                let b = try MLMultiArray(shape: [2, 4], dataType: .float32)
                _ = MLMultiArray(concatenating: [a, b], axis: 0, dataType: .float32)
            }, "[MLMultiArray.init(concatenating:axis:dataType:)] shapes must agree off axis 0: [2, 3] vs [2, 4]")
    }

    @Test("transfer between different shapes")
    func transferShapes() async {
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let a = try MLMultiArray(shape: [2, 3], dataType: .float32)
                a.transfer(to: try MLMultiArray(shape: [3, 2], dataType: .float32))
            }, "[MLMultiArray.transfer(to:)] shapes differ: [2, 3] vs destination [3, 2]")
    }

    @Test("a shaped array of another scalar type")
    func wrongScalarType() async {
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = MLShapedArray<Float>(try MLMultiArray(shape: [2], dataType: .float16))
            }, "the array holds float16 (Float16) elements, not Float")
    }

    @Test("typed buffer access with the wrong type")
    func wrongBufferType() async {
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try MLMultiArray([1, 2]).withUnsafeBufferPointer(ofType: Float.self) { _ in }
            }, "[MLMultiArray.withUnsafeBufferPointer(ofType:_:)] the array holds int32")
    }

    @Test("a linear offset past the last element")
    func offsetOutOfRange() async {
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = try MLMultiArray(shape: [2, 3], dataType: .int8)[6]
            }, "linear offset 6 is out of range for shape [2, 3] with strides [3, 1] (valid offsets 0..<6)")
    }

    @Test("an index out of range, or of the wrong rank")
    func keyOutOfRange() async {
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = try MLMultiArray(shape: [2, 3], dataType: .int8)[[1, 3] as [NSNumber]]
            }, "index [1, 3] is out of range for shape [2, 3]")
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try MLMultiArray(shape: [2, 3], dataType: .int8)[[1] as [NSNumber]] = 1
            }, "1 indices [1] for shape [2, 3] (rank 2)")
    }

    @Test("overlapping strides for init(shape:dataType:strides:)")
    func badStrides() async {
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = MLMultiArray(shape: [2, 2], dataType: .float32, strides: [1, 1])
            }, "[MLMultiArray.init(shape:dataType:strides:)] strides [1, 1] make elements of shape [2, 2] overlap")
        expectMessage(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = MLMultiArray(shape: [-1], dataType: .float32, strides: [1])
            }, "[MLMultiArray.init(shape:dataType:strides:)] shape [-1] has a negative dimension")
    }
}

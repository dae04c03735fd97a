import Testing

@testable import TesseraTensor

/// Bad indices, sizes and masks trap with a message naming the op and the shapes; nothing
/// reads out of bounds. One exit test per kind of check (each spawns a process).
@Suite("MLTensor traps on bad indices, k and masks")
struct MLTensorCompleteTrapTests {
    @Test("an index tensor that is not Int32 traps")
    func indicesOfWrongType() async {
        await #expect(processExitsWith: .failure) {
            let x = MLTensor(zeros: [3, 3], scalarType: Float.self)
            _ = x.gathering(atIndices: MLTensor([0, 1] as [Float]), alongAxis: 0)
        }
    }

    @Test("an index out of range traps before anything is read")
    func indexOutOfRange() async {
        await #expect(processExitsWith: .failure) {
            let x = MLTensor(zeros: [3, 3], scalarType: Float.self)
            _ = await x.gathering(atIndices: MLTensor(shape: [1, 2], scalars: [0, 3], scalarType: Int32.self))
                .shapedArray(of: Float.self)
        }
    }

    @Test("a scatter index out of range traps")
    func scatterIndexOutOfRange() async {
        await #expect(processExitsWith: .failure) {
            let x = MLTensor(zeros: [2, 3], scalarType: Float.self)
            let i = MLTensor(shape: [2, 1], scalars: [0, -4], scalarType: Int32.self)
            _ = await x.replacing(atIndices: i, with: Float(1), alongAxis: 1).shapedArray(of: Float.self)
        }
    }

    @Test("k larger than the last axis traps")
    func kTooLarge() async {
        await #expect(processExitsWith: .failure) {
            _ = MLTensor(zeros: [2, 3], scalarType: Float.self).topK(4)
        }
    }

    @Test("a mask of the wrong shape traps")
    func maskWrongShape() async {
        await #expect(processExitsWith: .failure) {
            let x = MLTensor(zeros: [2, 3], scalarType: Float.self)
            _ = x.replacing(with: Float(1), where: MLTensor(repeating: true, shape: [3, 2], scalarType: Bool.self))
        }
    }

    @Test("a subscript index out of range traps")
    func subscriptOutOfRange() async {
        await #expect(processExitsWith: .failure) {
            _ = MLTensor(zeros: [2, 3], scalarType: Float.self)[nil, -4]
        }
    }

    @Test("an attention mask that does not broadcast to the scores traps")
    func attentionMask() async {
        await #expect(processExitsWith: .failure) {
            let q = MLTensor(zeros: [2, 4], scalarType: Float.self)
            _ = MLTensor.scaledDotProductAttention(
                query: q, key: q, value: q, mask: MLTensor(repeating: true, shape: [3, 4], scalarType: Bool.self))
        }
    }
}

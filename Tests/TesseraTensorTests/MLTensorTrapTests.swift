import Testing

@testable import TesseraTensor

/// Programmer errors trap (MLTensor operations never throw). Each exit test spawns a process,
/// so there are only a few, one per kind of check.
@Suite("MLTensor traps on bad shapes and axes")
struct MLTensorTrapTests {
    @Test("matmul with mismatched inner dimensions traps")
    func matmulInnerMismatch() async {
        await #expect(processExitsWith: .failure) {
            _ = MLTensor(zeros: [2, 3], scalarType: Float.self).matmul(MLTensor(zeros: [4, 5], scalarType: Float.self))
        }
    }

    @Test("adding non-broadcastable shapes traps")
    func addNotBroadcastable() async {
        await #expect(processExitsWith: .failure) {
            _ = MLTensor(zeros: [2, 3], scalarType: Float.self) + MLTensor(zeros: [4], scalarType: Float.self)
        }
    }

    @Test("a reduction axis out of range traps")
    func axisOutOfRange() async {
        await #expect(processExitsWith: .failure) {
            _ = MLTensor(zeros: [2, 3], scalarType: Float.self).sum(alongAxes: 2)
        }
    }

    @Test("a repeated reduction axis traps")
    func repeatedAxis() async {
        await #expect(processExitsWith: .failure) {
            _ = MLTensor(zeros: [2, 3], scalarType: Float.self).max(alongAxes: 1, -1)
        }
    }

    @Test("stacking tensors of different shapes traps")
    func stackShapeMismatch() async {
        await #expect(processExitsWith: .failure) {
            _ = MLTensor(stacking: [
                MLTensor(zeros: [2], scalarType: Float.self), MLTensor(zeros: [3], scalarType: Float.self),
            ])
        }
    }
}

import TesseraKernels
import TesseraTensor

extension MLModel {
    /// Computes a prediction's pending tensors in one plan within the memory limits
    /// (``MLModelConfiguration/memoryLimit`` and the process-wide `TESSERA_MEMORY_LIMIT`).
    ///
    /// - Throws: ``MLModelError`` `.generic` when the plan needs more than a limit allows;
    ///   nothing is computed then.
    func materializeWithinMemoryLimit(_ tensors: [MLTensor]) throws {
        do {
            try MLTensor.materialize(tensors, memoryLimit: configurationSnapshot.memoryLimit)
        } catch {
            throw memoryLimitError(error)
        }
    }

    /// ``materializeWithinMemoryLimit(_:)`` on the calling task's thread.
    func materializeWithinMemoryLimit(_ tensors: [MLTensor]) async throws {
        do {
            try await MLTensor.materialize(tensors, memoryLimit: configurationSnapshot.memoryLimit)
        } catch {
            throw memoryLimitError(error)
        }
    }

    /// The error for a prediction a memory limit refused.
    func memoryLimitError(_ error: BufferPoolError) -> MLModelError {
        let name = stateOwner.modelName
        let refused: String
        switch error {
        case .budgetExceeded(let requested, let budget):
            refused =
                "the prediction needs \(Self.bytes(requested)) for its results at once, more than the model's "
                + "memory limit of \(Self.bytes(budget)) (MLModelConfiguration.memoryLimit)"
        case .memoryLimitExceeded(let requested, let live, let limit):
            refused =
                "the prediction needs \(Self.bytes(requested)) for its results at once, and only "
                + "\(Self.bytes(max(limit - live, 0))) of the process's memory limit of \(Self.bytes(limit)) "
                + "(TESSERA_MEMORY_LIMIT) is free"
        case .invalidSize(let size):
            refused = "a result of \(size) bytes was asked for"
        }
        return MLModelError(
            .generic, "cannot predict with \(name): \(refused); nothing was computed and the model can still predict",
            underlyingError: error)
    }

    /// A byte count for a message: `512 bytes`, `64.0 MiB`, `1.5 GiB`.
    static func bytes(_ count: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard count >= 1024 else { return "\(count) bytes" }
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return "\((value * 10).rounded() / 10) \(units[unit])"
    }
}

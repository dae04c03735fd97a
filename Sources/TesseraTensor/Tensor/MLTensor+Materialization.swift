import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// **Tessera extension.** Computes the tensor now, blocking the calling thread, and
    /// returns it (already materialized, so reading it again is free).
    ///
    /// Use it as an evaluation barrier in long-running lazy code: the graph behind the tensor
    /// is computed and dropped, so its intermediates stop holding memory.
    ///
    /// ```swift
    /// var state = MLTensor(zeros: [1024], scalarType: Float.self)
    /// for _ in 0..<10_000 { state = (state * 0.9 + input).materialized() }
    /// ```
    @discardableResult
    public func materialized() -> MLTensor {
        guard let node = storedNode else { return self }
        GraphExecutor.materialize([node])
        return self
    }

    /// **Tessera extension.** Computes the tensor now, on the calling task's thread (bounded
    /// CPU work that never waits for another task; no thread hop), and returns it.
    ///
    /// ```swift
    /// let state = await (state * 0.9 + input).materialized()
    /// ```
    @discardableResult
    public func materialized() async -> MLTensor {
        guard let node = storedNode else { return self }
        await GraphExecutor.materialize([node])
        return self
    }

    /// Computes several tensors in one plan (shared subexpressions run once) and returns what
    /// the run did (for the benchmarks, the demo and the planner tests).
    ///
    /// Tensors that hold their elements inline (small folded `Float` results) are already
    /// computed and take no part in the plan.
    @discardableResult
    package static func materialize(_ tensors: [MLTensor]) -> PlanStatistics {
        GraphExecutor.materialize(tensors.compactMap(\.storedNode))
    }

    /// Computes several tensors in one plan on the calling task's thread (see
    /// ``materialized()-swift.method``'s asynchronous form).
    @discardableResult
    package static func materialize(_ tensors: [MLTensor]) async -> PlanStatistics {
        await GraphExecutor.materialize(tensors.compactMap(\.storedNode))
    }

    /// Computes several tensors in one plan, as `materialize(_:)` does, within a memory
    /// budget: the plan's peak is reserved in the shared buffer pool before anything runs, and a
    /// plan that needs more than `memoryLimit` bytes (when given) or than the pool's memory
    /// limit leaves room for throws instead (nothing computed; the tensors stay pending).
    ///
    /// - Throws: `BufferPoolError` (``GraphExecutor/materialize(_:memoryLimit:)``).
    @discardableResult
    package static func materialize(_ tensors: [MLTensor], memoryLimit: Int?) throws(BufferPoolError)
        -> PlanStatistics
    {
        try GraphExecutor.materialize(tensors.compactMap(\.storedNode), memoryLimit: memoryLimit)
    }

    /// ``materialize(_:memoryLimit:)`` on the calling task's thread.
    @discardableResult
    package static func materialize(_ tensors: [MLTensor], memoryLimit: Int?) async throws(BufferPoolError)
        -> PlanStatistics
    {
        try await GraphExecutor.materialize(tensors.compactMap(\.storedNode), memoryLimit: memoryLimit)
    }

    /// Whether the elements exist (inline, a leaf, or computed); reading them then costs no
    /// computation.
    package var isMaterialized: Bool { storedNode.map { $0.value != nil } ?? true }

    /// **Tessera extension.** The elements in row-major order as `Scalar` values (converted
    /// when the tensor's type differs), computing the tensor first if needed.
    public func scalars<Scalar: MLTensorScalar>(of _: Scalar.Type) -> [Scalar] {
        materialized()
        return copyScalars(Scalar.self)
    }

    /// **Tessera extension.** The elements as `Scalar` values, computed on the calling task's
    /// thread without a thread hop.
    public func scalars<Scalar: MLTensorScalar>(of _: Scalar.Type) async -> [Scalar] {
        await materialized()
        return copyScalars(Scalar.self)
    }

    private func copyScalars<Scalar: MLTensorScalar>(_: Scalar.Type) -> [Scalar] {
        if let storedNode { BuildReads.note(reading: storedNode) }
        let count = scalarCount
        if storedNode == nil, Scalar.self == Float.self {
            return inline.withElements { Array(UnsafeBufferPointer(start: $0, count: count)) } as! [Scalar]
        }
        let value = node.value!
        return [Scalar](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                ElementwiseKernels.cast(
                    input: value.pointer, layout: value.layout, from: value.type,
                    output: UnsafeMutableRawPointer(buffer.baseAddress!), to: Scalar.kernelScalarType)
            }
            initialized = count
        }
    }
}

extension MLTensor {
    /// Readies the first computation of `tensors` without computing them: their plan is
    /// compiled and cached, and the constants their kernels read are prepared
    /// (``GraphExecutor/prepare(_:)``). A model calls it at load.
    ///
    /// - Returns: The number of kernel steps that read a constant.
    @discardableResult
    package static func prepare(_ tensors: [MLTensor]) -> Int {
        GraphExecutor.prepare(tensors.compactMap(\.storedNode))
    }
}

import TesseraKernels

/// A materialization kept so its plan can run again on new values for some of its leaves
/// (a model's inputs), without building or collecting the graph again.
///
/// It holds the plan, the graph's other leaves (constants) by value, where each given input
/// sits among the leaves, and the entries of the requested nodes; never a node. Two
/// recordings of the same graph built twice are ``isSameRun(as:)``: the same cached plan,
/// the same leaves in the same places, and the very same constant storages (a graph that
/// makes a new constant every time it is built — random draws, say — never is).
package struct RecordedPlan: @unchecked Sendable {
    /// One leaf of the run, in the snapshot's order.
    enum Leaf {
        /// A value the graph holds (a weight, a literal): the same on every run.
        case constant(entry: Int, value: TensorValue)
        /// The caller's input at `position` (see ``GraphExecutor/materializeRecording(_:inputs:memoryLimit:onTaskThread:)``).
        case input(entry: Int, position: Int)
    }

    let plan: ExecutionPlan
    let leaves: [Leaf]
    /// The requested nodes' entries, in request order.
    let requested: [Int]
    /// For each requested entry that is a leaf (an input or a constant asked for as an
    /// output), its index in ``leaves``.
    let requestedLeaves: [Int?]
    /// Each input's shape and element type, by position.
    package let inputSignature: [(shape: [Int], type: KernelScalarType)]

    /// Whether `other` recorded the same plan on the same constants with the inputs and
    /// requested nodes in the same places.
    package func isSameRun(as other: RecordedPlan) -> Bool {
        guard plan === other.plan, requested == other.requested, leaves.count == other.leaves.count else {
            return false
        }
        for (a, b) in zip(leaves, other.leaves) {
            switch (a, b) {
            case (.constant(let e1, let v1), .constant(let e2, let v2)):
                guard e1 == e2, v1.storage === v2.storage, v1.layout == v2.layout, v1.type == v2.type else {
                    return false
                }
            case (.input(let e1, let p1), .input(let e2, let p2)):
                guard e1 == e2, p1 == p2 else { return false }
            default: return false
            }
        }
        return true
    }

    /// Whether `other` recorded inputs of the same shapes and types, in the same order.
    package func hasSameInputs(as other: RecordedPlan) -> Bool {
        inputSignature.elementsEqual(other.inputSignature) { $0.shape == $1.shape && $0.type == $1.type }
    }

    /// Whether `values` fit the recorded inputs: one per input, each of its shape and type.
    package func accepts(_ values: [TensorValue]) -> Bool {
        values.count == inputSignature.count
            && zip(values, inputSignature).allSatisfy { $0.layout.shape == $1.shape && $0.type == $1.type }
    }
}

extension GraphExecutor {
    /// Materializes `nodes` as ``materialize(_:memoryLimit:)`` does (for an `async` caller when
    /// `onTaskThread`: loops that find the kernel workers busy stay on this thread, as in that
    /// function's `async` form), and returns a recording of the run when it can run again on
    /// new values of `inputs`: every input is a distinct leaf of the graph (a node with its elements), and
    /// every requested node was computed by the run or is one of its leaves. `nil` when the
    /// nodes were all materialized already, or otherwise.
    package static func materializeRecording(
        _ nodes: [Node], inputs: [Node], memoryLimit: Int?, onTaskThread: Bool
    ) throws(BufferPoolError) -> RecordedPlan? {
        if nodes.allSatisfy({ $0.value != nil }) { return nil }
        let (_, snapshot, plan) = try runOnTaskThread(onTaskThread) { () throws(BufferPoolError) in
            try materializeSnapshot(nodes, scope: PlanCacheScope.current, reserving: true, memoryLimit: memoryLimit)
        }
        var positions: [ObjectIdentifier: Int] = [:]
        for (position, input) in inputs.enumerated() {
            guard positions.updateValue(position, forKey: ObjectIdentifier(input)) == nil else { return nil }
        }
        var leaves: [RecordedPlan.Leaf] = []
        leaves.reserveCapacity(snapshot.leafValues.count)
        var found = 0
        for (entry, value) in snapshot.leafValues {
            if let position = positions[ObjectIdentifier(snapshot.nodes[entry])] {
                leaves.append(.input(entry: entry, position: position))
                found += 1
            } else {
                leaves.append(.constant(entry: entry, value: value))
            }
        }
        guard found == inputs.count else { return nil }
        let signature = inputs.map { ($0.shape, $0.type) }
        let leafIndex = Dictionary(uniqueKeysWithValues: snapshot.leafValues.enumerated().map { ($1.entry, $0) })
        return RecordedPlan(
            plan: plan, leaves: leaves, requested: snapshot.outputs,
            requestedLeaves: snapshot.outputs.map { leafIndex[$0] }, inputSignature: signature)
    }

    /// Runs a recorded plan again on new input values, within a memory budget as
    /// ``materialize(_:memoryLimit:)`` does (`onTaskThread` as for
    /// ``materializeRecording(_:inputs:memoryLimit:onTaskThread:)``), and returns the requested
    /// nodes' values in request order; `nil` (nothing run) when `inputs` do not fit the
    /// recording (``RecordedPlan/accepts(_:)``).
    ///
    /// - Throws: `BufferPoolError`, as ``materialize(_:memoryLimit:)`` does.
    package static func replay(
        _ recorded: RecordedPlan, inputs: [TensorValue], memoryLimit: Int?, onTaskThread: Bool
    ) throws(BufferPoolError) -> [TensorValue]? {
        guard recorded.accepts(inputs) else { return nil }
        var leafValues: [(entry: Int, value: TensorValue)] = []
        leafValues.reserveCapacity(recorded.leaves.count)
        for leaf in recorded.leaves {
            switch leaf {
            case .constant(let entry, let value): leafValues.append((entry, value))
            case .input(let entry, let position): leafValues.append((entry, inputs[position]))
            }
        }
        let (values, _) = try runOnTaskThread(onTaskThread) { () throws(BufferPoolError) in
            try execute(
                recorded.plan, leafValues: leafValues, keeping: nil, reserving: true, memoryLimit: memoryLimit,
                cacheHit: true)
        }
        // The run returns the computed requested entries (a few); a requested leaf is its value.
        return zip(recorded.requested, recorded.requestedLeaves).map { entry, leaf in
            if let leaf { return leafValues[leaf].value }
            return values.first { $0.entry == entry }!.value
        }
    }

    /// `body`, inside ``KernelThreads/withoutDispatchFallback(_:)`` when `wrapped`.
    private static func runOnTaskThread<Result>(
        _ wrapped: Bool, _ body: () throws(BufferPoolError) -> Result
    ) throws(BufferPoolError) -> Result {
        guard wrapped else { return try body() }
        let result = KernelThreads.withoutDispatchFallback { () -> Swift.Result<Result, BufferPoolError> in
            do throws(BufferPoolError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

import TesseraKernels

/// The Swift runtime's strong reference count of an object (exported by the runtime on every
/// platform; used here only to decide which intermediates are worth keeping).
@_silgen_name("swift_retainCount")
private func swiftRetainCount(_ object: UnsafeMutableRawPointer) -> Int

extension GraphExecutor {
    /// Which intermediates of this run to record on their nodes: those of at most
    /// ``heldIntermediateLimit`` bytes that something outside the graph still holds (a tensor
    /// the caller kept, a pending node of another graph), or `nil` when there is none.
    ///
    /// Code that reads several results with one `await` each (`let (values, indices) =
    /// p.topK(50)`, then the cumulative sum of `values`, then `indices`) would otherwise compute
    /// the shared part again for every later read. A node's references are its graph readers
    /// (counted in the plan), this run's snapshot, and everything else; an intermediate whose
    /// count exceeds the first two is held elsewhere. Keeping it costs nothing more than the
    /// holder already pays (the value lives as long as the node), and a kept value is never
    /// written over in place. The count is read without synchronization, so a reference
    /// taken or dropped on another thread meanwhile only changes whether a value is kept.
    static func heldIntermediates(_ plan: ExecutionPlan, _ nodes: [Node]) -> [Bool]? {
        var keeping: [Bool]?
        for entry in plan.intermediateSteps
        where nodes[entry].count * nodes[entry].type.byteCount <= heldIntermediateLimit
            && strongReferences(nodes, entry) - referenceBias > 1 + plan.readerCounts[entry]
        {
            if keeping == nil { keeping = [Bool](repeating: false, count: nodes.count) }
            keeping![entry] = true
        }
        return keeping
    }

    /// The largest intermediate kept, in bytes: results such as top-k values and indices or
    /// per-row statistics, cheap to hold. Larger ones die after their last reader as planned,
    /// so a held reference to a big intermediate never raises a run's peak memory or costs it
    /// an in-place write.
    static let heldIntermediateLimit = 256 << 10

    /// The strong references to `nodes[index]`, as counted from inside this function (which
    /// may hold one of its own, depending on the optimizer: ``referenceBias`` measures it).
    @inline(never)
    static func strongReferences(_ nodes: [Node], _ index: Int) -> Int {
        swiftRetainCount(Unmanaged.passUnretained(nodes[index]).toOpaque())
    }

    /// What ``strongReferences(_:_:)`` reports beyond the references that exist, measured once
    /// on a node only an array holds.
    static let referenceBias: Int = {
        let probe = [
            Node(
                value: TensorValue(
                    storage: TensorStorage.allocate(count: 1, type: .float32), layout: StridedLayout(contiguous: [1]),
                    type: .float32))
        ]
        return strongReferences(probe, 0) - 1
    }()
}

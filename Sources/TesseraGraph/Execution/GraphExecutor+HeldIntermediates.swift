import TesseraKernels

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
    ///
    /// The count comes from the standard library's `_getRetainCount(_:)`, the public (if
    /// underscored) function behind its debugger support: an `@_alwaysEmitIntoClient` wrapper,
    /// compiled into this module, around the runtime's exported `swift_retainCount` entry
    /// point (one relaxed load of the object's reference-count word). It is safe here because
    /// nothing depends on the number being exact: the object is alive for the whole call (the
    /// snapshot holds it); a count that another thread changes meanwhile, or that some
    /// future runtime reports differently, only changes which small intermediates are
    /// recorded on their nodes — one too few recomputes a shared part on a later read, one
    /// too many keeps at most ``heldIntermediateLimit`` bytes as long as the holder keeps
    /// the node. Buffers are written in place only after their own uniqueness check
    /// (`TensorValue.hasUniqueStorage()`), never on this count. (`isKnownUniquelyReferenced`
    /// cannot answer the question: it tells one reference from several, and a node that only
    /// its graph readers hold has several.)
    @inline(never)
    static func strongReferences(_ nodes: [Node], _ index: Int) -> Int {
        Int(bitPattern: _getRetainCount(nodes[index]))
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

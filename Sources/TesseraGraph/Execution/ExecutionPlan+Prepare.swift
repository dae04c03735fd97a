import TesseraKernels

extension ExecutionPlan {
    /// One kernel step's operands as known before any run: the op and, per operand, its value
    /// when it is a constant nobody writes (or a view of one), `nil` when it is computed, and
    /// its shape.
    struct PreparationTask {
        let op: GraphOp
        let operands: [TensorValue?]
        let shapes: [[Int]]
    }

    /// The kernel steps of this plan that read a constant (``PreparedWeights/isCacheable(_:)``:
    /// a loaded model's weights and views of them), with those operands as the step will see
    /// them, for their rules' ``OpRule/prepare(_:operands:shapes:)``.
    ///
    /// Walks the steps without running any: a view step over a known value gets its layout
    /// (kept only when it shares the constant's memory), an operand the kernel needs row-major
    /// counts as known only when it already is (the run would copy it, into memory a prediction
    /// may write), and every other step's result is unknown.
    func preparationTasks(leafValues: [(entry: Int, value: TensorValue)]) -> [PreparationTask] {
        var known = [TensorValue?](repeating: nil, count: entries.count)
        for leaf in leafValues where PreparedWeights.isCacheable(leaf.value.storage) {
            known[leaf.entry] = leaf.value
        }
        var tasks: [PreparationTask] = []
        func add(_ entry: GraphSnapshot.Entry) {
            let rule = entry.op.rule
            let operands = entry.inputs.enumerated().map { index, input -> TensorValue? in
                guard let value = known[canonical[input]] else { return nil }
                return rule.needsRowMajor(entry.op, operand: index) && !value.isCompact ? nil : value
            }
            if operands.contains(where: { $0 != nil }) {
                let shapes = entry.inputs.map { entries[canonical[$0]].shape }
                tasks.append(PreparationTask(op: entry.op, operands: operands, shapes: shapes))
            }
        }
        for step in steps {
            switch step {
            case .view(let i):
                let entry = entries[i]
                guard let source = known[canonical[entry.inputs[0]]] else { continue }
                let value = entry.op.rule.view(entry.op, of: source)
                if value.storage === source.storage { known[i] = value }
            case .kernel(let i):
                add(entries[i])
            case .convEpilogue(_, let epilogue):
                add(entries[tables.epilogues[epilogue].conv])
            case .convMean(_, let mean):
                add(entries[tables.convMeans[mean].epilogue.conv])
            case .depthwiseBlock(_, let block):
                // The block's first stage reads its input; the later stages' inputs are computed.
                for stage in tables.depthwiseBlocks[block].stages { add(entries[stage.conv]) }
            case .fused, .fusedReduce, .fusedSoftmax, .reduceConcat, .rowFused:
                continue
            }
        }
        return tasks
    }
}

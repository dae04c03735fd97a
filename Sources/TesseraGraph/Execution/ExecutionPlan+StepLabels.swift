import TesseraKernels

extension ExecutionPlan {
    /// What step `index` computes, for a ``StepProfile``: its kind, its operation (the graph op
    /// without parameters, or `elementwise` for a fused program) and the kernel path it runs,
    /// asked of the kernel layer's own selectors for convolutions and matrix products.
    ///
    /// Called while the plan runs (the step's inputs are still in `values`), after the step's
    /// clock has stopped; only when profiling.
    func stepLabels(_ index: Int, values: [TensorValue?]) -> (kind: String, operation: String, path: String) {
        let step = steps[index]
        let entry = entries[step.entry]
        func input(_ i: Int) -> TensorValue? { values[canonical[i]] }
        switch step {
        case .view:
            return ("view", Self.operationName(entry.op), "view (no kernel)")
        case .fused:
            return ("fused", "elementwise", "fused elementwise")
        case .kernel:
            return ("kernel", Self.operationName(entry.op), kernelPath(entry, inputs: entry.inputs.map(input)))
        case .fusedReduce:
            return ("fusedReduce", Self.operationName(entry.op), "fused elementwise + reduction")
        case .fusedSoftmax:
            return ("fusedSoftmax", Self.operationName(entry.op), "fused elementwise + softmax")
        case .reduceConcat:
            return ("reduceConcat", Self.operationName(entry.op), "reduction over concatenated parts")
        case .rowFused(_, let group):
            let reductions = Set(tables.rowGroups[group].members.map { "\($0.op)" }).sorted().joined(separator: "+")
            return ("rowFused", "elementwise with row \(reductions) (normalization)", "row-fused reductions")
        case .depthwiseBlock(_, let index):
            let block = tables.depthwiseBlocks[index]
            // The first stage is an expansion or an image model's first layer (`DepthwiseBlock.fuses`).
            let first = block.expand.map { stage -> String in
                guard case .conv2d(let parameters) = entries[stage.conv].op else { return "expand" }
                let weightShape = entries[entries[stage.conv].inputs[1]].shape
                return DepthwiseBlockDirect.fuses(
                    inputShape: entries[block.input].shape, weightShape: weightShape, parameters: parameters)
                    ? "first layer" : "expand"
            }
            let names = [first, "depthwise", block.project.map { _ in "project" }]
            let byChannels = DepthwiseBlock.splitsByChannels(
                hasExpand: block.expand != nil, middleShape: block.expand.map { entries[$0.output].shape } ?? [])
            return (
                "depthwiseBlock", "conv2d",
                "depthwise block (" + names.compactMap { $0 }.joined(separator: " + ")
                    + (byChannels ? ", channel groups in cache)" : ", bands in cache)")
            )
        case .convMean(_, let index):
            let conv = entries[tables.convMeans[index].epilogue.conv]
            return (
                "convMean", "conv2d + mean",
                kernelPath(conv, inputs: conv.inputs.map(input)) + " + fused epilogue + mean (global pool)"
            )
        case .convEpilogue(_, let index):
            let epilogue = tables.epilogues[index]
            let absorbed = entries[epilogue.conv]
            return (
                "convEpilogue", Self.operationName(absorbed.op),
                kernelPath(absorbed, inputs: absorbed.inputs.map(input))
                    + (epilogue.activation.map { " + fused \($0) epilogue" } ?? " + fused epilogue")
            )
        }
    }

    /// The kernel path of a kernel step's op on its inputs.
    private func kernelPath(_ entry: GraphSnapshot.Entry, inputs: [TensorValue?]) -> String {
        switch entry.op {
        case .conv2d(let parameters):
            guard inputs.count >= 2, let x = inputs[0], let w = inputs[1] else { return "conv2d" }
            return ConvolutionKernels.route(
                inputShape: x.layout.shape, weightShape: w.layout.shape, parameters: parameters
            ).name
        case .matmul:
            guard inputs.count == 2, let a = inputs[0], let b = inputs[1] else { return "matmul" }
            if MatMulRule.preparedOperands(a, b) != nil { return "packed GEMM (weights prepared once)" }
            let (m, k, n) = (
                a.layout.shape[a.layout.rank - 2], a.layout.shape[a.layout.rank - 1], entry.shape.last ?? 1
            )
            let batch = m * n == 0 ? 0 : entry.shape.reduce(1, *) / (m * n)
            return GEMMKernels.pathName(batchCount: batch, m: m, n: n, k: k, type: a.type)
        case .softmax, .logSoftmax: return "softmax"
        case .reduce: return "reduction"
        case .unary, .binary, .select, .cast: return "elementwise (unfused)"
        case .maxPool2d, .averagePool2d: return "pooling"
        case .concat, .pad, .tile, .gather, .gatherElements, .gatherND, .slice, .permute, .reshape, .broadcast:
            return "copy / gather"
        default: return Self.operationName(entry.op)
        }
    }

    /// A graph op's name without its parameters: `reshape[1, 4]` is `reshape`.
    static func operationName(_ op: GraphOp) -> String {
        let name = "\(op)"
        let end = name.firstIndex { "([<".contains($0) } ?? name.endIndex
        return String(name[..<end])
    }
}

import TesseraKernels

extension ExecutionPlan {
    /// Runs the steps on the snapshot's leaf values and returns the value of every entry
    /// requested, plus the peak bytes held by intermediates.
    ///
    /// Intermediates marked in `keeping` (entries of ``intermediateSteps``) are returned too;
    /// holding them keeps a later step from writing over them in place.
    func run(
        leafValues: [(entry: Int, value: TensorValue)], keeping: [Bool]? = nil
    ) -> (values: [(entry: Int, value: TensorValue)], peakBytes: Int, inPlaceSteps: Int) {
        // Every entry starts without a value. (`Array(repeating: nil, count:)` copied the `nil`
        // into each element through the optional's value witness: 66 of the 1317 samples
        // MobileNetV2's calling thread spent outside parallel loops, against 3 now.)
        var values = [TensorValue?](unsafeUninitializedCapacity: entries.count) { buffer, initialized in
            for index in buffer.indices { (buffer.baseAddress! + index).initialize(to: nil) }
            initialized = buffer.count
        }
        for leaf in leafValues { values[leaf.entry] = leaf.value }
        var liveBytes = 0
        var peakBytes = 0
        var allocatedBytes = [Int](repeating: 0, count: entries.count)
        var inPlaceSteps = 0
        var kept: [(entry: Int, value: TensorValue)] = []
        func input(_ i: Int) -> TensorValue { values[canonical[i]]! }
        // Only inside `GraphExecutor.withStepProfile`: the clock is read around each step.
        let profile = StepProfile.active
        var profiled: [StepProfile.Step] = []
        var labelling: UInt64 = 0
        let runStart = profile.map { _ in ContinuousClock.now }

        for (stepIndex, step) in steps.enumerated() {
            let stepStart = profile.map { _ in ContinuousClock.now }
            let i = step.entry
            let entry = entries[i]
            let value: TensorValue
            switch step {
            case .view:
                value = view(entry, of: input(entry.inputs[0]))
            case .fused(_, let index):
                let (program, leaves) = (tables.programs[index].program, tables.programs[index].leaves)
                // In place: a compact intermediate of the same type and shape that dies at this
                // step, and that nothing else (no view) still shares, takes the result.
                var reusable: TensorStorage?
                for r in inPlaceCandidates[stepIndex] where reusable == nil {
                    guard var candidate = values[r], candidate.isCompact else { continue }
                    values[r] = nil
                    if candidate.hasUniqueStorage() {
                        reusable = candidate.storage
                        liveBytes -= allocatedBytes[r]
                        allocatedBytes[r] = 0
                    }
                    values[r] = candidate
                }
                let out = reusable ?? TensorStorage.allocate(count: entry.shape.reduce(1, *), type: entry.type)
                inPlaceSteps += reusable == nil ? 0 : 1
                program.run(
                    shape: entry.shape,
                    inputs: leaves.map { leaf in
                        let v = values[leaf]!
                        return FusedInput(pointer: v.pointer, layout: v.layout.broadcast(to: entry.shape), type: v.type)
                    },
                    outputs: [FusedOutput(pointer: out.pointer, type: entry.type)], memo: memos[stepIndex])
                value = TensorValue(storage: out, layout: contiguousLayouts[i], type: entry.type)
            case .kernel:
                value = runKernel(i, inputs: entry.inputs.map(input))
            case .fusedReduce(_, let index, let producer):
                let (program, leaves) = (tables.programs[index].program, tables.programs[index].leaves)
                value = runFusedReduce(
                    entry, program: program, producerShape: entries[producer].shape,
                    scratchType: entries[producer].type,
                    leaves: leaves.map { values[$0]! })
            case .fusedSoftmax(_, let index, let producer):
                let (program, leaves) = (tables.programs[index].program, tables.programs[index].leaves)
                value = runFusedSoftmax(
                    entry, program: program, producerShape: entries[producer].shape,
                    leaves: leaves.map { values[$0]! })
            case .reduceConcat(_, let parts):
                value = runReduceConcat(entry, parts: tables.partLists[parts].map { values[$0]! })
            case .rowFused(_, let group):
                value = runRowGroup(tables.rowGroups[group], values: values)
            case .depthwiseBlock(_, let block):
                value = runDepthwiseBlock(
                    tables.depthwiseBlocks[block], memo: depthwiseBlockMemos[block], values: values)
            case .convMean(_, let mean):
                value = runConvolutionMean(tables.convMeans[mean], entry: i, values: values)
            case .convEpilogue(_, let index):
                let epilogue = tables.epilogues[index]
                let clamp = epilogue.clamp(values)
                let conv = entries[epilogue.conv]
                if let (program, leaves) = epilogue.unfused, !epilogue.activationConstantsHold(values) {
                    let product = runKernel(epilogue.conv, inputs: conv.inputs.map(input))
                    let out = TensorStorage.allocate(count: entry.shape.reduce(1, *), type: entry.type)
                    program.run(
                        shape: entry.shape,
                        inputs: leaves.map { leaf in
                            let v = leaf == epilogue.conv ? product : values[leaf]!
                            return FusedInput(
                                pointer: v.pointer, layout: v.layout.broadcast(to: entry.shape), type: v.type)
                        },
                        outputs: [FusedOutput(pointer: out.pointer, type: entry.type)], memo: nil)
                    value = TensorValue(storage: out, layout: contiguousLayouts[i], type: entry.type)
                } else {
                    value = runKernel(
                        epilogue.conv, inputs: conv.inputs.map(input), residual: epilogue.residual.map { values[$0]! },
                        columnBias: epilogue.columnBias.map { values[$0]! },
                        clamp: clamp, activation: epilogue.activation)
                    epilogue.giveTiesTheLeftBound(clamp, in: value)
                }
            }
            if value.storage.byteCount > 0 && !entry.op.isView {
                allocatedBytes[i] = value.storage.byteCount
                liveBytes += allocatedBytes[i]
                peakBytes = Swift.max(peakBytes, liveBytes)
            }
            values[i] = value
            if let keeping, keeping[i] { kept.append((i, value)) }
            if let stepStart {
                let nanoseconds = StepProfile.nanoseconds(since: stepStart)
                let labelStart = ContinuousClock.now
                let labels = stepLabels(stepIndex, values: values)
                labelling &+= StepProfile.nanoseconds(since: labelStart)
                profiled.append(
                    StepProfile.Step(
                        index: stepIndex, kind: labels.kind, operation: labels.operation, path: labels.path,
                        shape: entry.shape, nanoseconds: nanoseconds))
            }
            // Intermediates whose last reader was this step die now; their buffers go back to
            // the pool for the next step of similar size.
            for r in releases[stepIndex] {
                values[r] = nil
                liveBytes -= allocatedBytes[r]
            }
        }
        if let profile, let runStart {
            let total = StepProfile.nanoseconds(since: runStart)
            profile.record(StepProfile.Run(steps: profiled, nanoseconds: total - Swift.min(total, labelling)))
        }
        // Every requested entry, and every pending entry merged into one that has a value,
        // gets its value.
        var results: [(entry: Int, value: TensorValue)] = []
        results.reserveCapacity(outputs.count + mergedEntryList.count + kept.count)
        if outputs.count == 1 && mergedEntryList.isEmpty {
            results.append((outputs[0], values[canonical[outputs[0]]]!))
        } else {
            var given = [Bool](repeating: false, count: entries.count)
            for output in outputs where !given[output] {
                given[output] = true
                results.append((output, values[canonical[output]]!))
            }
            for i in mergedEntryList where !given[i] {
                if let value = values[canonical[i]] { results.append((i, value)) }
            }
        }
        results += kept
        return (results, peakBytes, inPlaceSteps)
    }

    /// Runs `program` over chunks of leading-axis slices of `producerShape` and reduces each
    /// chunk's trailing axes straight away.
    private func runFusedReduce(
        _ entry: GraphSnapshot.Entry, program: FusedProgram, producerShape: [Int], scratchType: KernelScalarType,
        leaves: [TensorValue]
    ) -> TensorValue {
        guard case .reduce(let op, let axes) = entry.op else {
            kernelFailure("[fusedReduce] \(entry.op) is not a reduction")
        }
        let out = TensorStorage.allocate(count: entry.shape.reduce(1, *), type: entry.type)
        let outputSliceCount = entry.shape.dropFirst().reduce(1, *)
        runInChunks(program, producerShape: producerShape, scratchType: scratchType, leaves: leaves) {
            scratch, shape, start in
            ReductionKernels.reduce(
                op, input: scratch, layout: StridedLayout(contiguous: shape), type: scratchType, axes: axes,
                output: out.pointer + start * outputSliceCount * entry.type.byteCount, outputType: entry.type)
        }
        return TensorValue(storage: out, layout: StridedLayout(contiguous: entry.shape), type: entry.type)
    }

    /// Runs `program` over chunks of leading-axis slices of `producerShape` and takes each
    /// chunk's softmax (or log-softmax) along the last axis into the result.
    private func runFusedSoftmax(
        _ entry: GraphSnapshot.Entry, program: FusedProgram, producerShape: [Int], leaves: [TensorValue]
    ) -> TensorValue {
        guard let (_, log) = SoftmaxRule.parameters(entry.op) else {
            kernelFailure("[fusedSoftmax] \(entry.op) is not a softmax")
        }
        let out = TensorStorage.allocate(count: entry.shape.reduce(1, *), type: entry.type)
        let sliceBytes = producerShape.dropFirst().reduce(1, *) * entry.type.byteCount
        let axis = producerShape.count - 1
        runInChunks(program, producerShape: producerShape, scratchType: entry.type, leaves: leaves) {
            scratch, shape, start in
            let layout = StridedLayout(contiguous: shape)
            let target = out.pointer + start * sliceBytes
            if log {
                SoftmaxKernels.logSoftmax(input: scratch, layout: layout, type: entry.type, axis: axis, output: target)
            } else {
                SoftmaxKernels.softmax(input: scratch, layout: layout, type: entry.type, axis: axis, output: target)
            }
        }
        return TensorValue(storage: out, layout: StridedLayout(contiguous: entry.shape), type: entry.type)
    }

    /// Reduces each part of a concatenation as rows of the reduction's row size and writes
    /// its results after the previous part's (see ``Step/reduceConcat(entry:parts:)``).
    private func runReduceConcat(_ entry: GraphSnapshot.Entry, parts: [TensorValue]) -> TensorValue {
        guard case .reduce(let op, _) = entry.op else {
            kernelFailure("[reduceConcat] \(entry.op) is not a reduction")
        }
        let outputCount = entry.shape.reduce(1, *)
        let out = TensorStorage.allocate(count: outputCount, type: entry.type)
        let totalCount = parts.reduce(0) { $0 + $1.layout.shape.reduce(1, *) }
        guard outputCount > 0 else {
            return TensorValue(storage: out, layout: StridedLayout(contiguous: entry.shape), type: entry.type)
        }
        let rowSize = totalCount / outputCount
        var row = 0
        for part in parts {
            let rows = part.layout.shape.reduce(1, *) / Swift.max(1, rowSize)
            guard rows > 0 else { continue }
            // Row-major elements of the part, as the concatenation would hold them.
            let base = part.layout.isContiguous ? part : part.compacted()
            let layout = StridedLayout(contiguous: [rows, rowSize]).withOffset(base.layout.offset)
            ReductionKernels.reduce(
                op, input: base.pointer, layout: layout, type: base.type, axes: [1],
                output: out.pointer + row * entry.type.byteCount, outputType: entry.type)
            row += rows
        }
        return TensorValue(storage: out, layout: StridedLayout(contiguous: entry.shape), type: entry.type)
    }

    /// Runs `program` over chunks of leading-axis rows of `producerShape` (about 64K elements,
    /// 256 KB of `Float`, each: the scratch block stays in the core's L2 cache, and each chunk's
    /// setup — planning the program, planning the reduction — is paid a quarter as often as with
    /// 16K-element chunks), in parallel, and
    /// hands each chunk to `consume` with its shape and first row before the next chunk
    /// overwrites it.
    private func runInChunks(
        _ program: FusedProgram, producerShape: [Int], scratchType: KernelScalarType, leaves: [TensorValue],
        consume: (_ scratch: UnsafeMutableRawPointer, _ shape: [Int], _ start: Int) -> Void
    ) {
        let leading = producerShape[0]
        let sliceCount = producerShape.dropFirst().reduce(1, *)
        guard leading > 0 else { return }
        // At most 64 Ki elements of scratch per chunk, and chunks of (nearly) equal rows: 256
        // rows of 768 make 4 chunks of 64 rows, not 85 + 85 + 85 + 1 (which left one thread
        // with twice the other's work).
        let maximumRows = Swift.max(1, 65_536 / Swift.max(1, sliceCount))
        let chunks = (leading + maximumRows - 1) / maximumRows
        let rowsPerChunk = (leading + chunks - 1) / chunks
        let broadcastLeaves = leaves.map { $0.with(layout: $0.layout.broadcast(to: producerShape)) }
        let cost = ParallelCost(nanosecondsPerItem: Double(rowsPerChunk * sliceCount) * 0.5)
        parallelFor(count: chunks, cost: cost) { range in
            let scratch = UnsafeMutableRawPointer.allocate(
                byteCount: Swift.max(1, rowsPerChunk * sliceCount * scratchType.byteCount), alignment: 64)
            defer { scratch.deallocate() }
            for chunk in range {
                let start = chunk * rowsPerChunk
                let rows = Swift.min(rowsPerChunk, leading - start)
                var shape = producerShape
                shape[0] = rows
                program.run(
                    shape: shape,
                    inputs: broadcastLeaves.map { leaf in
                        var layout = leaf.layout
                        layout.offset += start * layout.strides[0]
                        layout.shape[0] = rows
                        return FusedInput(pointer: leaf.pointer, layout: layout, type: leaf.type)
                    },
                    outputs: [FusedOutput(pointer: scratch, type: scratchType)])
                consume(scratch, shape, start)
            }
        }
    }

    /// `source` with the layout `entry`'s view op gives it (the op's ``OpRule/view(_:of:)``).
    private func view(_ entry: GraphSnapshot.Entry, of source: TensorValue) -> TensorValue {
        entry.op.rule.view(entry.op, of: source)
    }

    /// Runs entry `index`'s kernel on `inputs` into a new buffer through the op's rule
    /// (``OpRule/run(_:_:)``), with the operands it asks for made row-major; `residual` and
    /// `clamp` are what a convolution adds and applies (see
    /// ``Step/convEpilogue(entry:_:)``).
    func runKernel(
        _ index: Int, inputs: [TensorValue], residual: TensorValue? = nil,
        columnBias: TensorValue? = nil, clamp: ConvolutionClamp = .none, activation: LinearActivation? = nil
    ) -> TensorValue {
        let entry = entries[index]
        let rule = entry.op.rule
        var operands = inputs
        for i in operands.indices where rule.needsRowMajor(entry.op, operand: i) {
            operands[i] = operands[i].compacted()
        }
        let out = TensorStorage.allocate(count: entry.shape.reduce(1, *), type: entry.type)
        rule.run(
            entry.op,
            KernelCall(
                inputs: operands, output: out.pointer, shape: entry.shape, type: entry.type,
                residual: residual?.compacted(), columnBias: columnBias?.compacted(), clamp: clamp,
                activation: activation))
        return TensorValue(storage: out, layout: contiguousLayouts[index], type: entry.type)
    }
}

extension StridedLayout {
    /// The layout moved to start at `offset`.
    func withOffset(_ offset: Int) -> StridedLayout {
        var copy = self
        copy.offset = offset
        return copy
    }
}

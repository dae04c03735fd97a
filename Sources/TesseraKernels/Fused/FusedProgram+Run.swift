extension FusedProgram {
    /// Runs the program over every element of `shape`.
    ///
    /// - Parameters:
    ///   - shape: The iteration shape; every input layout has this shape (stride 0 where it
    ///     broadcasts) and every output is written contiguously in this shape.
    ///   - inputs: At least ``inputCount`` operands.
    ///   - outputs: One per entry of ``outputs``.
    /// - Precondition: the counts match and every input layout's shape equals `shape`.
    ///   - memo: Where to keep the plan between runs: a caller that runs the same program
    ///     again and again (a step of a cached graph plan) skips planning when the layouts
    ///     repeat.
    package func run(
        shape: [Int], inputs: [FusedInput], outputs outputOperands: [FusedOutput], memo: FusedPlanMemo? = nil
    ) {
        kernelPrecondition(
            inputs.count >= inputCount, "[fused] program reads \(inputCount) inputs but \(inputs.count) were given")
        kernelPrecondition(
            outputOperands.count == outputs.count,
            "[fused] program writes \(outputs.count) outputs but \(outputOperands.count) were given")
        for (k, input) in inputs.enumerated() {
            kernelPrecondition(
                input.layout.shape == shape,
                "[fused] input \(k) has shape \(input.layout.shape), expected the iteration shape \(shape)")
        }
        guard shape.reduce(1, *) > 0 else { return }
        switch computeType {
        case .float32:
            FusedRunner<Float>(program: self, shape: shape, inputs: inputs, outputs: outputOperands, memo: memo).run()
        case .float64:
            FusedRunner<Double>(program: self, shape: shape, inputs: inputs, outputs: outputOperands, memo: memo).run()
        case .int32:
            FusedRunner<Int32>(program: self, shape: shape, inputs: inputs, outputs: outputOperands, memo: memo).run()
        }
    }
}

/// Executes one run of a program in compute type `C`: plans once, then streams blocks in
/// parallel chunks, each chunk with its own scratch memory.
struct FusedRunner<C: FusedComputeScalar> {
    let program: FusedProgram
    let plan: FusedPlan
    let inputs: [FusedInput]
    let outputs: [FusedOutput]
    /// Values of inputs that are the same at every element, converted once.
    let uniformInputs: [C?]

    init(program: FusedProgram, shape: [Int], inputs: [FusedInput], outputs: [FusedOutput], memo: FusedPlanMemo?) {
        self.program = program
        self.inputs = inputs
        self.outputs = outputs
        let overlaps = FusedPlan.outputsOverlapInputs(inputs, outputs, count: shape.reduce(1, *))
        func makePlan() -> FusedPlan {
            FusedPlan(
                program: program, computeScalarType: C.computeType.scalarType, shape: shape, inputs: inputs,
                outputs: outputs, overlaps: overlaps)
        }
        plan =
            memo?.plan(shape: shape, inputs: inputs, outputs: outputs, overlaps: overlaps, make: makePlan) ?? makePlan()
        var uniform: [C?] = []
        for (k, access) in plan.access.enumerated() {
            if case .uniform(let position) = access {
                var value = C.converting(Int32(0))
                ScalarConversion.convert(
                    inputs[k].pointer + position * inputs[k].type.byteCount, from: inputs[k].type,
                    into: &value, to: C.computeType.scalarType, count: 1)
                uniform.append(value)
            } else {
                uniform.append(nil)
            }
        }
        uniformInputs = uniform
    }

    func run() {
        let blockSize = plan.blockSize
        let blocks = (plan.count + blockSize - 1) / blockSize
        let cost = ParallelCost(nanosecondsPerItem: plan.nanosecondsPerElement * Double(blockSize))
        parallelFor(count: blocks, cost: cost) { range in
            runChunk(blocks: range)
        }
    }

    /// The iteration's row length when blocks should end at row boundaries, else 0: when an input
    /// is strided (a per-row statistic or a per-column scale broadcast over the other axis, a
    /// transposed read) and rows hold at least 64 elements, a block inside one row reads such an
    /// input with one position computed per block, a per-column scale where it lies
    /// (``gather``), instead of walking a cursor across rows and copying: M7's nine layer norms
    /// (`[1500, 384]`, row-fused) took 9.6 ms at one thread before, 5.7 ms after.
    private var rowSplit: Int {
        guard let inner = plan.shape.last, inner >= 64, plan.shape.count > 1 else { return 0 }
        let strided = plan.access.contains {
            if case .strided = $0 { return true }
            return false
        }
        return strided ? inner : 0
    }

    private func runChunk(blocks: Range<Int>) {
        let blockSize = plan.blockSize
        let scratch = UnsafeMutablePointer<C>.allocate(capacity: plan.slotCount * blockSize)
        let values = UnsafeMutablePointer<BlockOperand<C>>.allocate(capacity: program.instructions.count)
        defer {
            scratch.deallocate()
            values.deallocate()
        }
        let spare = scratch + (plan.slotCount - 3) * blockSize
        let instructions = program.instructions
        let row = rowSplit
        for block in blocks {
            let blockStart = block * blockSize
            let blockEnd = Swift.min(blockStart + blockSize, plan.count)
            var next = blockStart
            while next < blockEnd {
                let start = next
                next = row > 0 ? Swift.min(blockEnd, (start / row + 1) * row) : blockEnd
                let n = next - start
                func destination(_ index: Int) -> UnsafeMutablePointer<C>? {
                    switch plan.destinations[index] {
                    case .none: nil
                    case .slot(let s): scratch + s * blockSize
                    case .output(let o): outputs[o].pointer.assumingMemoryBound(to: C.self) + start
                    }
                }
                for index in instructions.indices where !plan.deferred[index] {
                    let first = plan.pairedFirst[index]
                    if first >= 0 {
                        if let target = destination(index), runPair(first, index, values: values, into: target, n: n) {
                            values[index] = .block(target)
                            continue
                        }
                        values[first] = evaluate(
                            instructions[first], start: start, n: n, into: destination(first), values: values,
                            spare: spare)
                    }
                    values[index] = evaluate(
                        instructions[index], start: start, n: n, into: destination(index), values: values, spare: spare)
                }
                store(start: start, n: n, values: values)
            }
        }
    }

    /// Instruction `first` and its reader `second` (see ``FusedPlan/pairedFirst``) as one pass
    /// into `target` when the first reads a block and a uniform and the second's other operand
    /// is uniform; `false` (nothing done) otherwise.
    @inline(__always)
    private func runPair(
        _ first: Int, _ second: Int, values: UnsafeMutablePointer<BlockOperand<C>>,
        into target: UnsafeMutablePointer<C>, n: Int
    ) -> Bool {
        guard case .binary(let op1, let a1, let b1) = program.instructions[first],
            case .binary(let op2, let a2, let b2) = program.instructions[second],
            case .uniform(let s2) = values[a2 == first ? b2 : a2]
        else { return false }
        switch (values[a1], values[b1]) {
        case (.block(let p), .uniform(let s1)):
            return C.binaryPair(op1, left1: true, s1, op2, left2: a2 == first, s2, p, target, n)
        case (.uniform(let s1), .block(let p)):
            return C.binaryPair(op1, left1: false, s1, op2, left2: a2 == first, s2, p, target, n)
        default:
            return false
        }
    }

    @inline(__always)
    private func evaluate(
        _ instruction: FusedProgram.Instruction, start: Int, n: Int, into destination: UnsafeMutablePointer<C>?,
        values: UnsafeMutablePointer<BlockOperand<C>>, spare: UnsafeMutablePointer<C>
    ) -> BlockOperand<C> {
        switch instruction {
        case .constant(let value):
            return .uniform(C.converting(value))
        case .input(let k):
            if let value = uniformInputs[k] { return .uniform(value) }
            if plan.inPlace[k], case .linear(let position) = plan.access[k] {
                return .block(inputs[k].pointer.assumingMemoryBound(to: C.self) + position + start)
            }
            return load(k, start: start, n: n, into: destination!)
        case .unary(let op, let a):
            switch values[a] {
            case .uniform(let x): return .uniform(C.apply(op, scalar: x))
            case .block(let p):
                C.apply(op, p, destination!, n)
                return .block(destination!)
            }
        case .binary(let op, let a, let b):
            if case .uniform(let x) = values[a], case .uniform(let y) = values[b] {
                return .uniform(C.apply(op, scalar: x, y))
            }
            C.apply(op, values[a], values[b], destination!, n)
            return .block(destination!)
        case .select(let c, let a, let b):
            if case .uniform(let condition) = values[c] {
                // A condition uniform in the block picks one operand whole. A block operand is
                // copied into the select's own destination: that may be the output (stored by
                // no one else), and the operand's slot may be reused once the select has read it.
                let chosen = condition != C.converting(Int32(0)) ? values[a] : values[b]
                guard case .block(let p) = chosen, let destination, UnsafePointer(destination) != p else {
                    return chosen
                }
                destination.update(from: p, count: n)
                return .block(destination)
            }
            let operands = [values[c], values[a], values[b]].enumerated().map { (i, operand) -> UnsafePointer<C> in
                switch operand {
                case .block(let p): return p
                case .uniform(let v):
                    let fill = spare + i * plan.blockSize
                    fill.update(repeating: v, count: n)
                    return UnsafePointer(fill)
                }
            }
            C.select(operands[0], operands[1], operands[2], destination!, n)
            return .block(destination!)
        case .cast(let type, let a):
            switch values[a] {
            case .uniform(let x): return .uniform(C.roundTrip(x, through: type))
            case .block(let p):
                let d = destination!
                for i in 0..<n { d[i] = C.roundTrip(p[i], through: type) }
                return .block(d)
            }
        }
    }

    /// Reads input `k`'s elements `start..<start+n` (in iteration order) as `C`.
    private func load(_ k: Int, start: Int, n: Int, into destination: UnsafeMutablePointer<C>) -> BlockOperand<C> {
        let input = inputs[k]
        let computeType = C.computeType.scalarType
        switch plan.access[k] {
        case .uniform:
            kernelFailure("[fused] uniform inputs are read once per run")
        case .linear(let position):
            ScalarConversion.convert(
                input.pointer + (position + start) * input.type.byteCount, from: input.type,
                into: destination, to: computeType, count: n)
            return .block(destination)
        case .strided(let position):
            let strides = plan.inputStrides[k]
            return switch input.type {
            case .float32: gather(input.pointer, Float.self, position, strides, start, n, destination)
            case .float16: gather(input.pointer, Float16.self, position, strides, start, n, destination)
            case .float64: gather(input.pointer, Double.self, position, strides, start, n, destination)
            case .int32: gather(input.pointer, Int32.self, position, strides, start, n, destination)
            case .int8: gather(input.pointer, Int8.self, position, strides, start, n, destination)
            case .uint8: gather(input.pointer, UInt8.self, position, strides, start, n, destination)
            case .int16: gather(input.pointer, Int16.self, position, strides, start, n, destination)
            case .uint16: gather(input.pointer, UInt16.self, position, strides, start, n, destination)
            case .uint32: gather(input.pointer, UInt32.self, position, strides, start, n, destination)
            case .bool: gather(input.pointer, Bool.self, position, strides, start, n, destination)
            }
        }
    }

    /// Walks the collapsed shape from element `start`, one inner run at a time. A block that
    /// lies inside one run of a broadcast (stride-0) dimension comes back uniform.
    @inline(__always)
    private func gather<T: ConvertibleScalar>(
        _ raw: UnsafeRawPointer, _: T.Type, _ origin: Int, _ strides: [Int], _ start: Int, _ n: Int,
        _ destination: UnsafeMutablePointer<C>
    ) -> BlockOperand<C> {
        let base = raw.assumingMemoryBound(to: T.self)
        let shape = plan.shape
        let rank = shape.count
        let innerSize = shape[rank - 1]
        let innerStride = strides[rank - 1]
        let (row, firstColumn) = start.quotientAndRemainder(dividingBy: innerSize)
        // A block inside one row (a per-row mean broadcast along it, a per-column scale, a row of
        // a transposed read): find the row's position with one division per outer axis, then
        // read the run — one value as a uniform block when it is broadcast — without setting up a
        // cursor (this runs once per block of a streamed reduction or a row-split run).
        if innerSize - firstColumn >= n {
            var remainder = row
            var position = origin
            var axis = rank - 2
            while axis > 0 {
                let (quotient, index) = remainder.quotientAndRemainder(dividingBy: shape[axis])
                position += index * strides[axis]
                remainder = quotient
                axis -= 1
            }
            if rank > 1 { position += remainder * strides[0] }
            if innerStride == 0 { return .uniform(C.converting(base[position])) }
            position += firstColumn * innerStride
            // A contiguous run already of the compute type is read where it lies, as a linear
            // input of that type is (``FusedPlan/inPlace``).
            if innerStride == 1 && T.self == C.self {
                return .block(UnsafeRawPointer(base + position).assumingMemoryBound(to: C.self))
            }
            if innerStride == 1 {
                for j in 0..<n { destination[j] = C.converting(base[position + j]) }
            } else {
                for j in 0..<n { destination[j] = C.converting(base[position + j * innerStride]) }
            }
            return .block(destination)
        }
        return StridedRowCursor.withCursor(shape: shape, strides: strides, offset: origin, row: row) { cursor in
            var column = firstColumn
            var done = 0
            while true {
                let run = Swift.min(innerSize - column, n - done)
                let position = cursor.offset + column * innerStride
                let out = destination + done
                if innerStride == 0 {
                    out.update(repeating: C.converting(base[position]), count: run)
                } else if innerStride == 1 {
                    for j in 0..<run { out[j] = C.converting(base[position + j]) }
                } else {
                    for j in 0..<run { out[j] = C.converting(base[position + j * innerStride]) }
                }
                done += run
                if done == n { return .block(destination) }
                column = 0
                _ = cursor.nextRow()
            }
        }
    }

    /// Writes each output's block unless its instruction already wrote it in place.
    private func store(start: Int, n: Int, values: UnsafeMutablePointer<BlockOperand<C>>) {
        let computeType = C.computeType.scalarType
        for (o, register) in program.outputs.enumerated() {
            let output = outputs[o]
            let target = output.pointer + start * output.type.byteCount
            switch values[register] {
            case .block(let p):
                if plan.writtenDirectly[o] { continue }
                ScalarConversion.convert(p, from: computeType, into: target, to: output.type, count: n)
            case .uniform(let v):
                var value = v
                ScalarConversion.convert(&value, from: computeType, into: target, to: output.type, count: 1)
                let width = output.type.byteCount
                var filled = 1
                while filled < n {
                    let chunk = Swift.min(filled, n - filled)
                    (target + filled * width).copyMemory(from: target, byteCount: chunk * width)
                    filled += chunk
                }
            }
        }
    }
}

/// How one run of a program reaches each input: decided once per run from the layouts.
///
/// The payloads are plain integers: a strided input's strides are in
/// ``FusedPlan/inputStrides``. An array in a payload beside `Int`-only cases would carry the
/// case in its pointer's spare bits, where LeakSanitizer does not recognise the pointer, and every
/// plan kept in a graph's plan cache would be reported as a leak.
enum FusedInputAccess {
    /// Every element reads the same position (all strides 0 after collapsing).
    case uniform(position: Int)
    /// Element `i` of the iteration space is at `position + i`.
    case linear(position: Int)
    /// Elements follow the collapsed strides (``FusedPlan/inputStrides``) from `position`.
    case strided(position: Int)

    /// Whether the input is read through its strides.
    var isStrided: Bool {
        if case .strided = self { true } else { false }
    }
}

/// Where an instruction's block lives during a run.
enum FusedDestination {
    /// Nothing to store: a constant, or an input read in place.
    case none
    /// Scratch slot `s` of the chunk's scratch memory.
    case slot(Int)
    /// Written straight into output `o` at the block's position.
    case output(Int)
}

/// The per-run plan of a fused program: collapsed shape, input access, scratch slots.
struct FusedPlan {
    var shape: [Int]
    var count: Int
    var access: [FusedInputAccess]
    /// Each input's collapsed strides (empty unless its access is `.strided`).
    var inputStrides: [[Int]]
    /// Inputs read in place: contiguous with the iteration and already of the compute type.
    var inPlace: [Bool]
    var destinations: [FusedDestination]
    /// Outputs already written by their instruction (nothing to store after the block).
    var writtenDirectly: [Bool]
    /// For each instruction, the earlier one it pairs with (`-1`: none): both are one of
    /// `+ - * /` and the earlier one's value is read by this one alone. Where each has a uniform
    /// operand in a block, the two run as one pass when this one's turn comes
    /// (``FusedComputeScalar/binaryPair(_:left1:_:_:left2:_:_:_:_:)``) and the earlier one's block
    /// is never stored; otherwise the earlier one runs then. Its operands' slots stay live until
    /// then.
    var pairedFirst: [Int]
    /// The instructions some later one pairs with: skipped at their own turn.
    var deferred: [Bool]
    var slotCount: Int
    var blockSize: Int
    var nanosecondsPerElement: Double

    /// Whether an output's memory overlaps an input's, so no output may be written before the
    /// block's last read.
    static func outputsOverlapInputs(_ inputs: [FusedInput], _ outputs: [FusedOutput], count: Int) -> Bool {
        for output in outputs {
            let outStart = UInt(bitPattern: output.pointer)
            let outEnd = outStart + UInt(count * output.type.byteCount)
            for input in inputs {
                guard let range = input.layout.elementRange else { continue }
                let base = Int(bitPattern: input.pointer)
                let inStart = UInt(bitPattern: base + range.lowerBound * input.type.byteCount)
                let inEnd = UInt(bitPattern: base + (range.upperBound + 1) * input.type.byteCount)
                if inStart < outEnd && outStart < inEnd { return true }
            }
        }
        return false
    }

    init(
        program: FusedProgram, computeScalarType: KernelScalarType, shape fullShape: [Int], inputs: [FusedInput],
        outputs: [FusedOutput], overlaps: Bool
    ) {
        let contiguous = StridedLayout.contiguousStrides(for: fullShape)
        let collapsed = CollapsedLayouts(shape: fullShape, strides: inputs.map { $0.layout.strides } + [contiguous])
        shape = collapsed.shape
        count = collapsed.count
        let iterationStrides = collapsed.strides[inputs.count]
        access = []
        inputStrides = []
        inPlace = []
        for (k, input) in inputs.enumerated() {
            let strides = collapsed.strides[k]
            if strides.allSatisfy({ $0 == 0 }) {
                access.append(.uniform(position: input.layout.offset))
                inPlace.append(false)
            } else if strides == iterationStrides {
                access.append(.linear(position: input.layout.offset))
                inPlace.append(input.type == computeScalarType)
            } else {
                access.append(.strided(position: input.layout.offset))
                inPlace.append(false)
            }
            inputStrides.append(access[k].isStrided ? strides : [])
        }

        let instructions = program.instructions
        var lastUse = [Int](repeating: -1, count: instructions.count)
        for (index, instruction) in instructions.enumerated() {
            for operand in instruction.operands { lastUse[operand] = index }
        }
        for output in program.outputs { lastUse[output] = instructions.count }
        var readers = [Int](repeating: 0, count: instructions.count)
        for instruction in instructions {
            for operand in instruction.operands { readers[operand] += 1 }
        }
        for output in program.outputs { readers[output] += 1 }
        pairedFirst = [Int](repeating: -1, count: instructions.count)
        deferred = [Bool](repeating: false, count: instructions.count)
        for (index, instruction) in instructions.enumerated() {
            // Read once, by a later instruction that pairs with nothing yet; neither a reader of
            // a deferred value nor one itself (no chains: each pair reads computed values).
            let reader = lastUse[index]
            guard readers[index] == 1, reader < instructions.count, pairedFirst[index] < 0,
                pairedFirst[reader] < 0, case .binary(let first, let x, let y) = instruction,
                first.arithmeticCode != nil, x != y, !deferred[x], !deferred[y],
                case .binary(let second, let a, let b) = instructions[reader], second.arithmeticCode != nil,
                (a == index) != (b == index)
            else { continue }
            pairedFirst[reader] = index
            deferred[index] = true
            // The operands are read at the reader's turn: keep their slots until then.
            lastUse[x] = Swift.max(lastUse[x], reader)
            lastUse[y] = Swift.max(lastUse[y], reader)
        }

        var directOutput = [Int?](repeating: nil, count: instructions.count)
        writtenDirectly = [Bool](repeating: false, count: outputs.count)
        if !overlaps {
            for (o, register) in program.outputs.enumerated()
            where directOutput[register] == nil && outputs[o].type == computeScalarType {
                directOutput[register] = o
                writtenDirectly[o] = true
            }
        }

        destinations = []
        var freeSlots: [Int] = []
        slotCount = 0
        var slotOf = [Int?](repeating: nil, count: instructions.count)
        var cost = 0.0
        for (index, instruction) in instructions.enumerated() {
            for operand in instruction.operands where lastUse[operand] == index {
                if let slot = slotOf[operand] {
                    freeSlots.append(slot)
                    slotOf[operand] = nil
                }
            }
            var needsStorage = true
            switch instruction {
            case .constant:
                needsStorage = false
            case .input(let k):
                cost += 0.3
                if inPlace[k] {
                    needsStorage = false
                } else if case .uniform = access[k] {
                    needsStorage = false
                }
            case .unary(let op, _): cost += op.isTranscendental ? (op == .exp || op == .sigmoid ? 1 : 4) : 0.15
            case .binary(let op, _, _): cost += op.isTranscendental ? 4 : 0.15
            case .select, .cast: cost += 0.3
            }
            if !needsStorage {
                // An output naming a constant or an in-place input is stored after the block.
                if let o = directOutput[index] {
                    writtenDirectly[o] = false
                    directOutput[index] = nil
                }
                destinations.append(.none)
            } else if let o = directOutput[index] {
                destinations.append(.output(o))
            } else {
                let slot: Int
                if let free = freeSlots.popLast() {
                    slot = free
                } else {
                    slot = slotCount
                    slotCount += 1
                }
                slotOf[index] = slot
                destinations.append(.slot(slot))
            }
            if lastUse[index] < index, let slot = slotOf[index] {
                freeSlots.append(slot)  // a dead value: its slot is free again at once
                slotOf[index] = nil
            }
        }
        nanosecondsPerElement = cost + 0.3 * Double(outputs.count)
        // Small problems use one block of their own size; three spare slots serve `select`
        // operands that are uniform within a block.
        blockSize = Swift.min(FusedProgram.blockSize, (count + 15) / 16 * 16)
        // When an input is broadcast along rows of a few hundred to a few thousand elements
        // (a per-row mean or scale), blocks of exactly one row keep that input uniform in each
        // block, so it stays in a register instead of being filled in.
        let inner = shape[shape.count - 1]
        if shape.count > 1, (256...4096).contains(inner),
            access.indices.contains(where: {
                access[$0].isStrided && inputStrides[$0].last == 0
            })
        {
            blockSize = inner
        }
        slotCount += 3
    }
}

/// A chain of element-wise operations compiled into one pass over memory.
///
/// A program is a list of instructions in static single-assignment form: instruction `i`
/// defines value `i`, and later instructions name earlier values by index. It reads any
/// number of input operands (each with its own strided or broadcast layout and scalar type)
/// and writes one or more contiguous outputs. ``run(shape:inputs:outputs:)`` streams the
/// iteration space in blocks of ``blockSize`` elements; each instruction runs a SIMD loop over
/// a whole block, so the dispatch cost is paid per block and memory is read and written once.
///
/// All arithmetic happens in one ``ComputeType``: `float32` for float16 and float32 data,
/// `float64` for float64, `int32` for integer and bool data. Loads convert inputs to it and
/// stores convert to each output's type with ``ScalarConversion``'s rules; comparisons and
/// logical ops give 1 or 0, which a `bool` output stores as `true`/`false`.
///
/// ```swift
/// // hypot: sqrt(a*a + b*b)
/// let program = FusedProgram(computeType: .float32, instructions: [
///     .input(0), .input(1),
///     .binary(.mul, 0, 0), .binary(.mul, 1, 1),
///     .binary(.add, 2, 3), .unary(.sqrt, 4),
/// ], outputs: [5])
/// program.run(shape: [n], inputs: [a, b], outputs: [c])
/// ```
@usableFromInline package struct FusedProgram: Sendable, Hashable, CustomStringConvertible {
    /// The scalar type a program computes in.
    @usableFromInline package enum ComputeType: Sendable, Hashable, CustomStringConvertible {
        case float32, float64, int32

        /// The compute type for data of `type`: float16 and float32 compute in float32,
        /// float64 in float64, integers and bool in int32.
        package init(for type: KernelScalarType) {
            switch type {
            case .float16, .float32: self = .float32
            case .float64: self = .float64
            case .int8, .uint8, .int16, .uint16, .int32, .uint32, .bool: self = .int32
            }
        }

        @usableFromInline package var description: String {
            switch self {
            case .float32: return "float32"
            case .float64: return "float64"
            case .int32: return "int32"
            }
        }

        /// The storage type whose values the compute type holds exactly.
        var scalarType: KernelScalarType {
            switch self {
            case .float32: return .float32
            case .float64: return .float64
            case .int32: return .int32
            }
        }
    }

    /// One step of a program. Operands are indices of earlier instructions.
    package enum Instruction: Sendable, Hashable, CustomStringConvertible {
        /// The value of input operand `k` at each element.
        case input(Int)
        /// A constant (converted to the compute type; integers truncate).
        case constant(Double)
        /// A unary op of an earlier value.
        case unary(UnaryOp, Int)
        /// A binary op of two earlier values.
        case binary(BinaryOp, Int, Int)
        /// `condition != 0 ? a : b`.
        case select(condition: Int, Int, Int)
        /// The value rounded through `type` and back, as a cast to `type` would leave it
        /// (float → int truncates and wraps, anything → bool gives 0 or 1, float32 → float16
        /// rounds to half precision).
        case cast(to: KernelScalarType, Int)

        /// The earlier values the instruction reads.
        package var operands: [Int] {
            switch self {
            case .input, .constant: return []
            case .unary(_, let a), .cast(_, let a): return [a]
            case .binary(_, let a, let b): return [a, b]
            case .select(let c, let a, let b): return [c, a, b]
            }
        }

        package var description: String {
            switch self {
            case .input(let k): return "input \(k)"
            case .constant(let v): return "constant \(v)"
            case .unary(let op, let a): return "\(op) %\(a)"
            case .binary(let op, let a, let b): return "\(op) %\(a), %\(b)"
            case .select(let c, let a, let b): return "select %\(c) ? %\(a) : %\(b)"
            case .cast(let type, let a): return "cast<\(type)> %\(a)"
            }
        }
    }

    /// The number of elements each instruction processes at a time: 2048 (8 KB of `Float` per
    /// scratch slot) halves the per-block interpreter overhead of 1024 and keeps a
    /// three-operand block in a 32 KB L1 cache.
    package static let blockSize = 2048

    /// The type all arithmetic happens in.
    package let computeType: ComputeType
    /// The instructions, in order.
    package let instructions: [Instruction]
    /// For each output operand, the value it stores.
    package let outputs: [Int]
    /// The number of input operands the program reads (one more than the largest `input` index).
    package let inputCount: Int

    /// The input operand that value `register` loads (``Instruction/input(_:)``), or `nil`
    /// when it computes something else.
    package func inputIndex(loadedBy register: Int) -> Int? {
        if case .input(let k) = instructions[register] { return k }
        return nil
    }

    /// Checks and builds a program.
    ///
    /// - Precondition: every operand names an earlier instruction, every output names an
    ///   instruction, and every unary op is defined for the compute type (integer programs
    ///   support neg, abs, sign and square).
    package init(computeType: ComputeType, instructions: [Instruction], outputs: [Int]) {
        var inputCount = 0
        for (index, instruction) in instructions.enumerated() {
            for operand in instruction.operands {
                kernelPrecondition(
                    operand >= 0 && operand < index,
                    "[fused] instruction \(index) (\(instruction)) reads %\(operand), which is not an earlier value")
            }
            switch instruction {
            case .input(let k):
                kernelPrecondition(k >= 0, "[fused] negative input index \(k)")
                inputCount = Swift.max(inputCount, k + 1)
            case .unary(let op, _):
                kernelPrecondition(
                    computeType != .int32 || op.isDefinedForIntegers,
                    "[fused] \(op) is not defined for integer programs")
            default: break
            }
        }
        kernelPrecondition(!outputs.isEmpty, "[fused] a program needs at least one output")
        for output in outputs {
            kernelPrecondition(
                output >= 0 && output < instructions.count, "[fused] output %\(output) names no instruction")
        }
        self.computeType = computeType
        self.instructions = instructions
        self.outputs = outputs
        self.inputCount = inputCount
    }

    @usableFromInline package var description: String {
        var lines = ["fused program (\(computeType), \(inputCount) inputs)"]
        for (index, instruction) in instructions.enumerated() { lines.append("  %\(index) = \(instruction)") }
        lines.append("  outputs: " + outputs.map { "%\($0)" }.joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}

/// An input operand of a fused program or element-wise kernel: memory, its layout and type.
///
/// The layout's shape must equal the iteration shape (broadcast dimensions have stride 0);
/// use ``StridedLayout/broadcast(to:)`` first.
package struct FusedInput {
    /// The base pointer; element positions are `layout.offset + Σ index × stride`.
    package var pointer: UnsafeRawPointer
    /// Where the elements are.
    package var layout: StridedLayout
    /// The stored type.
    package var type: KernelScalarType

    /// An input read through `layout` from `pointer`, stored as `type`.
    package init(pointer: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType) {
        self.pointer = pointer
        self.layout = layout
        self.type = type
    }
}

/// An output of a fused program: contiguous row-major memory of the iteration shape.
///
/// An output may share memory with an input only when that input is read contiguously, with
/// the same type and no offset difference (an in-place update).
package struct FusedOutput {
    /// Where to write, contiguously.
    package var pointer: UnsafeMutableRawPointer
    /// The type to store.
    package var type: KernelScalarType

    /// An output written contiguously at `pointer` as `type`.
    package init(pointer: UnsafeMutableRawPointer, type: KernelScalarType) {
        self.pointer = pointer
        self.type = type
    }
}

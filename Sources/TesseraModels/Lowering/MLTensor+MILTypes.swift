import TesseraKernels
import TesseraTensor

/// MIL's type rules on top of the public `MLTensor` API: Tessera computes floats in Float32,
/// integers in Int32 and booleans as Bool, and mixed operands are promoted as MIL does. Shape
/// rules are not here: the lowering calls the tensor operations inside
/// `MLTensor.withShapeChecks`, which reports the first one broken.
extension MLTensor {
    /// A rank-0 constant of this tensor's scalar type.
    func scalar(_ value: Double) -> MLTensor {
        MLTensor.scalarConstant(value, type: kernelType)
    }

    /// The tensor in Float32 (a no-op when it is already).
    var asFloat: MLTensor { kernelType == .float32 ? self : cast(to: Float.self) }

    /// The tensor in Int32 (a no-op when it is already).
    var asInt32: MLTensor { kernelType == .int32 ? self : cast(to: Int32.self) }

    /// The tensor as bool: non-zero is true (a no-op for a bool tensor).
    var asBool: MLTensor { kernelType == .bool ? self : self .!= scalar(0) }

    /// The tensor converted to `type` (a no-op when it already has it).
    func converted(to type: KernelScalarType) -> MLTensor {
        kernelType == type ? self : cast(to: type.tensorScalarType)
    }

    /// Two operands brought to one scalar type as MIL does: a float meets an integer or
    /// bool in Float32; an integer meets a bool as an integer. With `arithmetic`, two bool
    /// operands become Int32 (MIL adds and multiplies booleans as integers).
    static func promoted(_ a: MLTensor, _ b: MLTensor, arithmetic: Bool = false) -> (MLTensor, MLTensor) {
        if a.kernelType == b.kernelType {
            return arithmetic && a.kernelType == .bool ? (a.asInt32, b.asInt32) : (a, b)
        }
        if a.kernelType.isFloatingPoint || b.kernelType.isFloatingPoint { return (a.asFloat, b.asFloat) }
        if a.kernelType == .bool { return (a.converted(to: b.kernelType), b) }
        if b.kernelType == .bool { return (a, b.converted(to: a.kernelType)) }
        return (a.asInt32, b.asInt32)
    }

    /// `reshaped(to:)`, or the tensor itself when it already has `shape`, so a lowered graph
    /// gets no reshape node that does nothing (the reshape's rule checks the count).
    func reshapedIfNeeded(to shape: [Int]) -> MLTensor {
        shape == self.shape ? self : reshaped(to: shape)
    }

    /// `axis` counted from the front, for lowering code that indexes the shape with it.
    ///
    /// - Throws: ``ShapeRuleBroken`` when the axis is outside `-rank..<rank` (or
    ///   `-(rank+1)...rank` with `insertion`); the shape-check scope the lowering runs in then
    ///   reports `[op] axis … is out of range …`.
    func axis(_ axis: Int, op: String, insertion: Bool = false) throws -> Int {
        guard let normalized = normalizedAxis(axis, op: op, insertion: insertion) else { throw ShapeRuleBroken() }
        return normalized
    }

    /// `axes` counted from the front and sorted.
    ///
    /// - Throws: ``ShapeRuleBroken`` for an out-of-range or repeated axis (reported as for
    ///   ``axis(_:op:insertion:)``).
    func axes(_ axes: [Int], op: String) throws -> [Int] {
        guard let normalized = normalizedAxes(axes, op: op) else { throw ShapeRuleBroken() }
        return normalized
    }

    /// A 1-D per-channel vector shaped to broadcast along axis 1 of this tensor (batch norm,
    /// PReLU and friends); a vector of another rank as it is. The arithmetic that uses it
    /// reports a channel count that does not fit.
    func channelVector(_ vector: MLTensor) throws -> MLTensor {
        try require(rank >= 2, "needs a channel axis (rank ≥ 2), got \(shape)")
        guard vector.rank == 1 else { return vector }
        return vector.reshapedIfNeeded(to: [vector.scalarCount] + [Int](repeating: 1, count: rank - 2))
    }
}

/// Thrown by lowering code that cannot go on after an `MLTensor` rule was broken (it needs a
/// normalized axis to index a shape). `MLTensor.withShapeChecks` then throws the rule's own
/// error, which names the op and the shapes.
struct ShapeRuleBroken: Error {}

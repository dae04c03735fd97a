import TesseraGraph
import TesseraKernels
import TesseraTensor

/// Graph building with the checks MIL models need: each helper validates what the graph op
/// would trap on and throws ``OperandError`` instead, so a model that meets shapes it was not
/// written for fails its prediction, not the process.
extension MLTensor {
    /// A rank-0 constant of this tensor's scalar type.
    func scalar(_ value: Double) -> MLTensor {
        MLTensor.scalarConstant(value, type: kernelType)
    }

    /// The tensor in Float32 (a no-op when it is already).
    var asFloat: MLTensor { kernelType == .float32 ? self : MLTensor(.cast(.float32), [self]) }

    /// The tensor converted to `type` (a no-op when it already has it).
    func converted(to type: KernelScalarType) -> MLTensor {
        kernelType == type ? self : MLTensor(.cast(type), [self])
    }

    /// `axis` counted from the front; throws when it is outside `-rank..<rank` (or
    /// `-(rank+1)...rank` with `insertion`).
    func axis(_ axis: Int, insertion: Bool = false) throws -> Int {
        let bound = insertion ? rank + 1 : rank
        try require(axis >= -bound && axis < bound, "axis \(axis) is out of range for rank \(rank)")
        return axis < 0 ? axis + bound : axis
    }

    /// `axes` counted from the front and sorted; throws on an out-of-range or repeated axis.
    func axes(_ axes: [Int]) throws -> [Int] {
        let normalized = try axes.map { try axis($0) }
        try require(Set(normalized).count == normalized.count, "repeated axis in \(axes)")
        return normalized.sorted()
    }

    /// The tensor in Int32 (a no-op when it is already).
    var asInt32: MLTensor { converted(to: .int32) }

    /// The tensor as bool: non-zero is true (a no-op for a bool tensor).
    var asBool: MLTensor { kernelType == .bool ? self : self .!= scalar(0) }

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

    /// Throws unless the shapes broadcast (until the lowering runs in a shape-check scope).
    static func requireBroadcastable(_ a: MLTensor, _ b: MLTensor) throws {
        try require(
            StridedLayout.broadcastShape(a.shape, b.shape) != nil,
            "shapes \(a.shape) and \(b.shape) are not broadcastable")
    }

    /// Throws unless `a.matmul(b)` fits (until the lowering runs in a shape-check scope).
    static func requireMatmul(_ a: MLTensor, _ b: MLTensor) throws {
        try require(a.rank >= 1 && b.rank >= 1, "operands must have rank ≥ 1")
        let inner = b.rank == 1 ? b.shape[0] : b.shape[b.rank - 2]
        try require(a.shape[a.rank - 1] == inner, "inner dimensions differ: \(a.shape) vs \(b.shape)")
        try require(
            StridedLayout.broadcastShape(Array(a.shape.dropLast(2)), Array(b.shape.dropLast(2))) != nil,
            "batch dimensions of \(a.shape) and \(b.shape) are not broadcastable")
    }

    /// `op(a, b)` with NumPy broadcasting after ``promoted(_:_:)``.
    static func elementwise(_ op: BinaryOp, _ a: MLTensor, _ b: MLTensor) throws -> MLTensor {
        var (a, b) = promoted(a, b)
        try require(
            StridedLayout.broadcastShape(a.shape, b.shape) != nil,
            "shapes \(a.shape) and \(b.shape) are not broadcastable")
        if a.kernelType == .bool && !op.isDefinedForBool {
            (a, b) = (a.converted(to: .int32), b.converted(to: .int32))
        }
        return MLTensor(.binary(op), a, b)
    }

    /// `op(self)`; integers go through Float32 for ops not defined on them.
    func elementwise(_ op: UnaryOp) -> MLTensor {
        let x = kernelType.isFloatingPoint || (kernelType != .bool && op.isDefinedForIntegers) ? self : asFloat
        return MLTensor(.unary(op), [x])
    }

    /// `condition ? a : b` with broadcasting; the condition is converted to bool.
    static func selecting(_ condition: MLTensor, _ a: MLTensor, _ b: MLTensor) throws -> MLTensor {
        let (a, b) = promoted(a, b)
        guard let ab = StridedLayout.broadcastShape(a.shape, b.shape),
            StridedLayout.broadcastShape(condition.shape, ab) != nil
        else {
            throw OperandError("shapes \(condition.shape), \(a.shape) and \(b.shape) are not broadcastable")
        }
        let mask =
            condition.kernelType == .bool ? condition : MLTensor(.binary(.notEqual), condition, condition.scalar(0))
        return MLTensor(.select, [mask, a, b])
    }

    /// The same elements with a new shape; throws when the counts differ.
    func reshaped(checked shape: [Int]) throws -> MLTensor {
        try require(
            shape.allSatisfy { $0 >= 0 } && shape.reduce(1, *) == scalarCount,
            "cannot reshape \(self.shape) (\(scalarCount) elements) to \(shape)")
        return shape == self.shape ? self : MLTensor(.reshape(shape), [self])
    }

    /// Axes reordered (`result axis i = input axis permutation[i]`, negative axes allowed).
    func permuted(checked permutation: [Int]) throws -> MLTensor {
        let normalized = try permutation.map { try axis($0) }
        try require(
            normalized.count == rank && Set(normalized).count == rank, "\(permutation) is not a permutation of \(shape)"
        )
        return normalized == Array(0..<rank) ? self : MLTensor(.permute(normalized), [self])
    }

    /// The reduction `op` over `axes` (`nil`: every axis), keeping reduced axes as 1 when
    /// `keepDims`.
    func reduced(_ op: ReductionOp, axes: [Int]?, keepDims: Bool) throws -> MLTensor {
        let axes = try axes.map { try self.axes($0) } ?? Array(0..<rank)
        var x = self
        if x.kernelType == .bool && op != .all && op != .any { x = x.converted(to: .int32) }
        if op == .mean { x = x.asFloat }
        for axis in axes where shape[axis] == 0 && (op == .max || op == .min) {
            throw OperandError("cannot reduce the empty axis \(axis)")
        }
        if axes.isEmpty { return x }
        let result = MLTensor(.reduce(op, axes: axes), [x])
        if keepDims { return result }
        return MLTensor(.reshape(shape.indices.filter { !axes.contains($0) }.map { shape[$0] }), [result])
    }

    /// A strided window along every axis (counts already clipped to the bounds).
    func sliced(starts: [Int], steps: [Int], counts: [Int]) -> MLTensor {
        if counts == shape && starts.allSatisfy({ $0 == 0 }) && steps.allSatisfy({ $0 == 1 }) { return self }
        return MLTensor(.slice(starts: starts, steps: steps, counts: counts), [self])
    }

    /// Elements `start..<start+count` along `axis`.
    func narrowed(axis: Int, start: Int, count: Int) -> MLTensor {
        var starts = [Int](repeating: 0, count: rank)
        var counts = shape
        starts[axis] = start
        counts[axis] = count
        return sliced(starts: starts, steps: [Int](repeating: 1, count: rank), counts: counts)
    }

    /// Inputs joined along `axis`; throws when their shapes differ off that axis.
    static func joined(_ tensors: [MLTensor], axis: Int) throws -> MLTensor {
        guard let first = tensors.first else { throw OperandError("nothing to concatenate") }
        let axis = try first.axis(axis)
        var pieces: [MLTensor] = []
        for tensor in tensors {
            var a = tensor.shape
            var b = first.shape
            try require(a.count == b.count, "ranks differ: \(tensor.shape) vs \(first.shape)")
            a[axis] = 0
            b[axis] = 0
            try require(a == b, "shapes differ off axis \(axis): \(tensor.shape) vs \(first.shape)")
            pieces.append(tensor.converted(to: first.kernelType))
        }
        return pieces.count == 1 ? pieces[0] : MLTensor(.concat(axis: axis), pieces)
    }

    /// The element-wise product with a 1-D per-channel vector along axis 1 (or the vector
    /// itself broadcast that way), for batch norm, PReLU and friends.
    func channelVector(_ vector: MLTensor) throws -> MLTensor {
        try require(rank >= 2, "needs a channel axis (rank ≥ 2), got \(shape)")
        if vector.rank == 1 {
            try require(
                vector.shape[0] == shape[1] || vector.shape[0] == 1, "\(vector.shape) values for \(shape[1]) channels")
            var target = [Int](repeating: 1, count: rank - 1)
            target[0] = vector.shape[0]
            return MLTensor(.reshape(target), [vector])
        }
        return vector
    }
}

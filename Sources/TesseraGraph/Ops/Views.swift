import TesseraKernels

/// ``GraphOp/reshape(_:)``, ``GraphOp/broadcast(_:)``, ``GraphOp/permute(_:)`` and
/// ``GraphOp/slice(starts:steps:counts:)``: a new layout over the input's elements. A reshape
/// copies a strided input first when no strides can express it
/// (``StridedLayout/reshaped(to:)``); the others never copy.
package enum ViewRule: OpRule {
    package static var kind: OpKind { .view }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        try expectInputs(op, inputs, 1)
        let input = inputs[0]
        switch op {
        case .reshape(let shape):
            try OpError.require(shape.allSatisfy { $0 >= 0 }, "[reshape] negative dimension in \(shape)")
            try OpError.require(
                try elementCount(op, shape) == input.count,
                "[reshape] cannot reshape \(input.shape) (\(input.count) scalars) to \(shape)")
            return (shape, input.type)
        case .broadcast(let shape):
            try OpError.require(
                StridedLayout.broadcastShape(input.shape, shape) == shape,
                "[broadcast] cannot broadcast \(input.shape) to \(shape)")
            _ = try elementCount(op, shape)
            return (shape, input.type)
        case .permute(let permutation):
            let rank = input.shape.count
            try OpError.require(
                permutation.count == rank && Set(permutation) == Set(0..<rank),
                "[permute] \(permutation) is not a permutation of the axes of \(input.shape)")
            return (permutation.map { input.shape[$0] }, input.type)
        case .slice(let starts, let steps, let counts):
            let shape = input.shape
            try OpError.require(
                starts.count == shape.count && steps.count == shape.count && counts.count == shape.count,
                "[slice] needs one start, step and count per axis of \(shape)")
            for axis in 0..<shape.count where counts[axis] > 0 {
                let last = starts[axis] + (counts[axis] - 1) * steps[axis]
                try OpError.require(
                    steps[axis] != 0 && starts[axis] >= 0 && starts[axis] < shape[axis] && last >= 0
                        && last < shape[axis],
                    "[slice] axis \(axis): start \(starts[axis]), step \(steps[axis]), count \(counts[axis]) "
                        + "leave the bounds of shape \(shape)")
            }
            try OpError.require(counts.allSatisfy { $0 >= 0 }, "[slice] negative count in \(counts) for shape \(shape)")
            return (counts, input.type)
        default:
            throw OpError("[\(op)] is not a view")
        }
    }

    package static func view(_ op: GraphOp, of source: TensorValue) -> TensorValue {
        switch op {
        case .reshape(let shape):
            if let layout = source.layout.reshaped(to: shape) { return source.with(layout: layout) }
            let base = source.compacted()
            var layout = StridedLayout(contiguous: shape)
            layout.offset = base.layout.offset
            return base.with(layout: layout)
        case .broadcast(let shape):
            return source.with(layout: source.layout.broadcast(to: shape))
        case .permute(let permutation):
            return source.with(layout: source.layout.permuted(permutation))
        case .slice(let starts, let steps, let counts):
            var layout = source.layout
            for axis in 0..<counts.count {
                layout.offset += starts[axis] * layout.strides[axis]
                layout.strides[axis] *= steps[axis]
            }
            layout.shape = counts
            return source.with(layout: layout)
        default:
            kernelFailure("[view] \(op) is not a view")
        }
    }
}

import TesseraKernels

extension GraphOp {
    /// The result shape and type of the op on inputs of the given shapes and types.
    ///
    /// Throws an ``OpError`` whose message names the op and the shapes when the inputs do not
    /// fit.
    func inferShapeAndType(_ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        func expectInputs(_ n: Int) throws(OpError) {
            try OpError.require(inputs.count == n, "[\(self)] takes \(n) inputs, got \(inputs.count)")
        }
        func checkAxis(_ axis: Int, _ rank: Int) throws(OpError) {
            try OpError.require(axis >= 0 && axis < rank, "[\(self)] axis \(axis) out of range for rank \(rank)")
        }
        switch self {
        case .constant:
            throw OpError("[constant] a constant node is built from a value")
        case .unary(let op):
            try expectInputs(1)
            let type = inputs[0].type
            try OpError.require(
                type.isFloatingPoint || (type.isInteger && op.isDefinedForIntegers),
                "[\(op)] is not defined for \(type) tensors (shape \(inputs[0].shape))")
            return (inputs[0].shape, type)
        case .binary(let op):
            try expectInputs(2)
            let (a, b) = (inputs[0], inputs[1])
            try OpError.require(
                a.type == b.type, "[\(op)] scalar types differ: \(a.type) \(a.shape) vs \(b.type) \(b.shape)")
            // Equal shapes and scalar operands (the common cases) need no new shape array.
            let broadcast: [Int]? =
                a.shape == b.shape || b.shape.isEmpty
                ? a.shape : (a.shape.isEmpty ? b.shape : StridedLayout.broadcastShape(a.shape, b.shape))
            guard let shape = broadcast else {
                throw OpError("[\(op)] shapes \(a.shape) and \(b.shape) are not broadcastable")
            }
            try OpError.require(
                a.type != .bool || op.isDefinedForBool, "[\(op)] is not defined for bool tensors (shape \(a.shape))")
            return (shape, op.producesBool ? .bool : a.type)
        case .select:
            try expectInputs(3)
            try OpError.require(inputs[0].type == .bool, "[select] the mask must be bool, got \(inputs[0].type)")
            try OpError.require(
                inputs[1].type == inputs[2].type,
                "[select] scalar types differ: \(inputs[1].type) vs \(inputs[2].type)")
            guard let ab = StridedLayout.broadcastShape(inputs[1].shape, inputs[2].shape),
                let shape = StridedLayout.broadcastShape(inputs[0].shape, ab)
            else {
                throw OpError(
                    "[select] shapes \(inputs[0].shape), \(inputs[1].shape) and \(inputs[2].shape) are not broadcastable"
                )
            }
            return (shape, inputs[1].type)
        case .cast(let type):
            try expectInputs(1)
            return (inputs[0].shape, type)
        case .reduce(let op, let axes):
            try expectInputs(1)
            var shape = inputs[0].shape
            for axis in axes {
                try checkAxis(axis, shape.count)
                if shape[axis] == 0 {
                    try OpError.require(
                        op != .max && op != .min && op != .argmax && op != .argmin,
                        "[\(op)] cannot reduce an empty axis \(axis) of shape \(inputs[0].shape)")
                }
                shape[axis] = 1
            }
            // Documented: integer means are float32.
            if op == .mean && inputs[0].type.isInteger { return (shape, .float32) }
            guard let type = op.outputType(for: inputs[0].type) else {
                throw OpError("[\(op)] is not defined for \(inputs[0].type) tensors (shape \(inputs[0].shape))")
            }
            return (shape, type)
        case .softmax(let axis), .logSoftmax(let axis):
            try expectInputs(1)
            try checkAxis(axis, inputs[0].shape.count)
            try OpError.require(
                inputs[0].type.isFloatingPoint, "[\(self)] needs a floating-point tensor, got \(inputs[0].type)")
            return (inputs[0].shape, inputs[0].type)
        case .scan(_, let axis, _, _):
            try expectInputs(1)
            try checkAxis(axis, inputs[0].shape.count)
            try OpError.require(inputs[0].type != .bool, "[\(self)] is not defined for bool tensors")
            return (inputs[0].shape, inputs[0].type)
        case .matmul:
            try expectInputs(2)
            let (a, b) = (inputs[0].shape, inputs[1].shape)
            try OpError.require(a.count >= 2 && b.count >= 2, "[matmul] operands must have rank ≥ 2: \(a) vs \(b)")
            try OpError.require(
                inputs[0].type == inputs[1].type,
                "[matmul] scalar types differ: \(inputs[0].type) vs \(inputs[1].type)")
            try OpError.require(inputs[0].type != .bool, "[matmul] is not defined for bool tensors")
            try OpError.require(a[a.count - 1] == b[b.count - 2], "[matmul] inner dimensions differ: \(a) vs \(b)")
            guard let batch = StridedLayout.broadcastShape(Array(a.dropLast(2)), Array(b.dropLast(2))) else {
                throw OpError("[matmul] batch dimensions of \(a) and \(b) are not broadcastable")
            }
            return (batch + [a[a.count - 2], b[b.count - 1]], inputs[0].type)
        case .reshape(let shape):
            try expectInputs(1)
            try OpError.require(shape.allSatisfy { $0 >= 0 }, "[reshape] negative dimension in \(shape)")
            try OpError.require(
                shape.reduce(1, *) == inputs[0].shape.reduce(1, *),
                "[reshape] cannot reshape \(inputs[0].shape) (\(inputs[0].shape.reduce(1, *)) scalars) to \(shape)")
            return (shape, inputs[0].type)
        case .broadcast(let shape):
            try expectInputs(1)
            try OpError.require(
                StridedLayout.broadcastShape(inputs[0].shape, shape) == shape,
                "[broadcast] cannot broadcast \(inputs[0].shape) to \(shape)")
            return (shape, inputs[0].type)
        case .permute(let permutation):
            try expectInputs(1)
            let rank = inputs[0].shape.count
            try OpError.require(
                permutation.count == rank && Set(permutation) == Set(0..<rank),
                "[transpose] \(permutation) is not a permutation of the axes of \(inputs[0].shape)")
            return (permutation.map { inputs[0].shape[$0] }, inputs[0].type)
        case .slice(let starts, let steps, let counts):
            try expectInputs(1)
            let shape = inputs[0].shape
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
            return (counts, inputs[0].type)
        case .concat(let axis):
            try OpError.require(!inputs.isEmpty, "[concatenate] needs at least one tensor")
            var shape = inputs[0].shape
            try checkAxis(axis, shape.count)
            for input in inputs.dropFirst() {
                try OpError.require(
                    input.type == inputs[0].type,
                    "[concatenate] scalar types differ: \(input.type) vs \(inputs[0].type)")
                var a = input.shape
                var b = inputs[0].shape
                try OpError.require(
                    a.count == b.count, "[concatenate] ranks differ: \(input.shape) vs \(inputs[0].shape)")
                a[axis] = 0
                b[axis] = 0
                try OpError.require(
                    a == b, "[concatenate] shapes differ off axis \(axis): \(input.shape) vs \(inputs[0].shape)")
                shape[axis] += input.shape[axis]
            }
            return (shape, inputs[0].type)
        case .pad(let before, let after, _):
            try expectInputs(1)
            let shape = inputs[0].shape
            try OpError.require(
                before.count == shape.count && after.count == shape.count,
                "[pad] needs one (before, after) pair per axis of \(shape)")
            return (zip(shape, zip(before, after)).map { $0 + $1.0 + $1.1 }, inputs[0].type)
        case .gather(let axis):
            try expectInputs(2)
            try checkAxis(axis, inputs[0].shape.count)
            try OpError.require(inputs[1].type == .int32, "[gather] indices must be int32, got \(inputs[1].type)")
            let s = inputs[0].shape
            return (Array(s[..<axis]) + inputs[1].shape + Array(s[(axis + 1)...]), inputs[0].type)
        case .tile(let multiples):
            try expectInputs(1)
            try OpError.require(
                multiples.count == inputs[0].shape.count && multiples.allSatisfy { $0 >= 0 },
                "[tile] multiples \(multiples) must be non-negative, one per axis of \(inputs[0].shape)")
            return (zip(inputs[0].shape, multiples).map { $0 * $1 }, inputs[0].type)
        case .conv2d(let parameters):
            try OpError.require(
                inputs.count == 2 || inputs.count == 3, "[conv2d] takes 2 or 3 inputs, got \(inputs.count)")
            try OpError.require(
                inputs.allSatisfy { $0.type == .float32 },
                "[conv2d] needs float32 tensors, got \(inputs.map { "\($0.type)" })")
            let shape = try parameters.checkedOutputShape(inputShape: inputs[0].shape, weightShape: inputs[1].shape)
            if inputs.count == 3 {
                try OpError.require(
                    inputs[2].shape == [shape[1]],
                    "[conv2d] bias \(inputs[2].shape) must have one value per output channel (\(shape[1]))")
            }
            return (shape, .float32)
        case .maxPool2d(let parameters), .averagePool2d(let parameters, _):
            try expectInputs(1)
            try OpError.require(inputs[0].type == .float32, "[\(self)] needs a float32 tensor, got \(inputs[0].type)")
            if case .averagePool2d = self {
                try OpError.require(
                    parameters.dilationHeight == 1 && parameters.dilationWidth == 1,
                    "[averagePool2d] dilation is not supported: \(parameters)")
            }
            return (try parameters.checkedOutputShape(inputShape: inputs[0].shape), .float32)
        case .argsort(let axis, _, let count):
            try expectInputs(1)
            try checkAxis(axis, inputs[0].shape.count)
            var shape = inputs[0].shape
            try OpError.require(
                count >= 0 && count <= shape[axis],
                "[topK] k = \(count) is larger than axis \(axis) of shape \(shape)")
            shape[axis] = count
            return (shape, .int32)
        case .gatherElements(let axis):
            try expectInputs(2)
            let (x, i) = (inputs[0].shape, inputs[1].shape)
            try checkAxis(axis, x.count)
            try OpError.require(
                inputs[1].type == .int32, "[gatherElements] indices must be int32, got \(inputs[1].type)")
            try OpError.require(
                i.count == x.count
                    && zip(x, i).enumerated().allSatisfy { $0.offset == axis || $0.element.1 <= $0.element.0 },
                "[gatherElements] indices \(i) do not fit operand \(x) along axis \(axis)")
            return (i, inputs[0].type)
        case .gatherND:
            try expectInputs(2)
            let (x, i) = (inputs[0].shape, inputs[1].shape)
            try OpError.require(
                inputs[1].type == .int32, "[gathering] indices must be int32, got \(inputs[1].type) \(i)")
            try OpError.require(
                !i.isEmpty && i[i.count - 1] <= x.count,
                "[gathering] indices \(i) need rank ≥ 1 and index vectors no longer than the rank of \(x)")
            return (Array(i.dropLast()) + Array(x[i[i.count - 1]...]), inputs[0].type)
        case .scatter(let axis):
            try expectInputs(3)
            let (x, i, u) = (inputs[0].shape, inputs[1].shape, inputs[2].shape)
            try checkAxis(axis, x.count)
            try OpError.require(
                inputs[1].type == .int32, "[replacing] indices must be int32, got \(inputs[1].type) \(i)")
            try OpError.require(
                inputs[2].type == inputs[0].type,
                "[replacing] replacement type \(inputs[2].type) differs from the tensor's \(inputs[0].type)")
            try OpError.require(
                u == i && i.count == x.count
                    && zip(x, i).enumerated().allSatisfy { $0.offset == axis || $0.element.1 <= $0.element.0 },
                "[replacing] indices \(i) and replacement \(u) must have one shape that fits \(x) off axis \(axis)")
            return (x, inputs[0].type)
        case .resize(let height, let width, _):
            try expectInputs(1)
            let shape = inputs[0].shape
            try OpError.require(
                shape.count >= 2 && height > 0 && width > 0,
                "[resized] needs rank ≥ 2 and a positive size, got \(shape) to \(height)×\(width)")
            return (shape.dropLast(2) + [height, width], inputs[0].type)
        case .multinomial(let samples):
            try expectInputs(2)
            try OpError.require(
                inputs[1].type == .uint32 && inputs[1].shape == [2],
                "[multinomial] the seed input must be uint32 [2], got \(inputs[1].type) \(inputs[1].shape)")
            let shape = inputs[0].shape
            try OpError.require(
                !shape.isEmpty && shape[shape.count - 1] > 0 && inputs[0].type.isFloatingPoint && samples >= 0,
                "[multinomial] needs floating-point weights with a non-empty last axis, got \(inputs[0].type) \(shape)")
            return (shape.dropLast() + [samples], .int32)
        case .nonMaximumSuppression(_, _, let maxOutputCount):
            try expectInputs(2)
            let (b, s) = (inputs[0].shape, inputs[1].shape)
            try OpError.require(
                b.count == 2 && b[1] == 4 && s == [b[0]] && inputs[0].type == .float32 && inputs[1].type == .float32,
                "[nonMaximumSuppression] needs float32 boxes [n, 4] and scores [n], got \(b) and \(s)")
            try OpError.require(maxOutputCount >= 0, "[nonMaximumSuppression] maxOutputCount \(maxOutputCount) < 0")
            return ([maxOutputCount], .int32)
        }
    }
}

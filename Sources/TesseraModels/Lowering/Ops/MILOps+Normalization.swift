import TesseraTensor

/// Softmax and the normalizations, on the public `MLTensor.softmax` and Tessera's
/// `layerNorm`.
extension MILOp {
    static let normalizationOps: [MILOp] = [
        MILOp("softmax", batch: .from { l in .alongAxes([try l.int("axis") ?? -1]) }, cost: .transcendental) {
            lowering in
            let x = try lowering.tensor("x")
            let axis = try lowering.int("axis") ?? -1
            return { args in
                let v = args[x].asFloat
                return [v.softmax(alongAxis: axis)]
            }
        },
        MILOp("layer_norm", batch: .from { l in .alongAxes(try l.ints("axes")) }, cost: .transcendental) {
            lowering in
            let x = try lowering.tensor("x")
            let axes = try lowering.ints("axes")
            let gamma = try lowering.optionalTensor("gamma")
            let beta = try lowering.optionalTensor("beta")
            let epsilon = Float(try lowering.double("epsilon") ?? 1e-5)
            return { args in
                let v = args[x].asFloat
                let normalized = try v.axes(axes ?? Array(0..<v.rank), op: "layer_norm")
                var y = v.layerNorm(alongAxes: normalized, epsilon: epsilon)
                // gamma and beta have the shape of the normalized axes.
                var parameterShape = [Int](repeating: 1, count: v.rank)
                for axis in normalized { parameterShape[axis] = v.shape[axis] }
                if let gamma { y = y * (args[gamma].asFloat.reshapedIfNeeded(to: parameterShape)) }
                if let beta { y = y + (args[beta].asFloat.reshapedIfNeeded(to: parameterShape)) }
                return [y]
            }
        },
        MILOp("instance_norm", batch: .leadingAxis, cost: .transcendental) { lowering in
            let x = try lowering.tensor("x")
            let gamma = try lowering.optionalTensor("gamma")
            let beta = try lowering.optionalTensor("beta")
            let epsilon = Float(try lowering.double("epsilon") ?? 1e-5)
            return { args in
                let v = args[x].asFloat
                try require(v.rank >= 3, "needs [N, C, spatial…], got \(v.shape)")
                var y = v.layerNorm(alongAxes: Array(2..<v.rank), epsilon: epsilon)
                if let gamma { y = y * (try v.channelVector(args[gamma].asFloat)) }
                if let beta { y = y + (try v.channelVector(args[beta].asFloat)) }
                return [y]
            }
        },
        MILOp("l2_norm", batch: .always(.alongAxes([-3, -2, -1])), cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let epsilon = Float(try lowering.double("epsilon") ?? 1e-6)
            return { args in
                // x / sqrt(Σ x² + ε) over the last three axes (all of a rank-3 input).
                let v = args[x].asFloat
                try require(v.rank >= 3, "needs rank ≥ 3, got \(v.shape)")
                let sum = v.squared().sum(alongAxes: Array((v.rank - 3)..<v.rank), keepRank: true)
                return [v * (sum + epsilon).rsqrt()]
            }
        },
        MILOp("local_response_norm", batch: .always(.alongAxes([-3])), cost: .transcendental) { lowering in
            let x = try lowering.tensor("x")
            let size = try lowering.required(lowering.int("size"), "size")
            let alpha = try lowering.double("alpha") ?? 1e-4
            let beta = Float(try lowering.double("beta") ?? 0.75)
            let k = Float(try lowering.double("k") ?? 1)
            guard size >= 1 else { throw lowering.invalid("size must be positive, got \(size)") }
            return { args in
                // x / (k + α/size · Σ x²)^β, the sum over channels c - h ... c + h with
                // h = (size - 1) / 2, channels being axis rank - 3 (axis 0 of a rank-3 CHW
                // input). coremltools' own expected values pin both down; PyTorch differs.
                let v = args[x].asFloat
                try require(v.rank >= 3, "needs [N, C, spatial…], got \(v.shape)")
                let c = v.rank - 3
                let channels = v.shape[c]
                let half = (size - 1) / 2
                var pads = [(before: Int, after: Int)](repeating: (0, 0), count: v.rank)
                pads[c] = (half, half)
                let squares = v.squared().padded(forSizes: pads, with: 0)
                var sum = squares.narrowed(alongAxis: c, start: 0, count: channels)
                for offset in 1..<(2 * half + 1) {
                    sum = sum + squares.narrowed(alongAxis: c, start: offset, count: channels)
                }
                return [v / (sum * Float(alpha / Double(size)) + k).pow(beta)]
            }
        },
        MILOp("batch_norm", batch: .leadingAxis, cost: .transcendental) { lowering in
            let x = try lowering.tensor("x")
            let epsilon = try lowering.double("epsilon") ?? 1e-5
            // Constant statistics fold into one scale and one shift per channel, at load.
            if let folded = try lowering.foldedBatchNorm(epsilon: epsilon) {
                let scale = try lowering.context.literalSlot(folded.scale)
                let shift = try lowering.context.literalSlot(folded.shift)
                let (s, b) = (lowering.appendOperand(slot: scale), lowering.appendOperand(slot: shift))
                return { args in
                    let v = args[x].asFloat
                    return [v * (try v.channelVector(args[s])) + (try v.channelVector(args[b]))]
                }
            }
            let mean = try lowering.tensor("mean")
            let variance = try lowering.tensor("variance")
            let gamma = try lowering.optionalTensor("gamma")
            let beta = try lowering.optionalTensor("beta")
            return { args in
                let v = args[x].asFloat
                var scale = (args[variance].asFloat + Float(epsilon)).rsqrt()
                if let gamma { scale = scale * args[gamma].asFloat }
                var shift = -(args[mean].asFloat * scale)
                if let beta { shift = shift + args[beta].asFloat }
                return [v * (try v.channelVector(scale)) + (try v.channelVector(shift))]
            }
        },
    ]
}

extension OperationLowering {
    /// Batch norm's per-channel scale `gamma / sqrt(variance + epsilon)` and shift
    /// `beta - mean · scale`, when all four statistics are constants.
    func foldedBatchNorm(epsilon: Double) throws -> (scale: MILConstant, shift: MILConstant)? {
        func values(_ name: String) -> [Double]?? {
            guard let binding = operation.inputs[name]?.bindings.first else { return .some(nil) }
            guard case .name(let value) = binding, let constant = context.constants[value] else { return nil }
            return constant.doubles.map { .some($0) }
        }
        guard let mean = values("mean"), let variance = values("variance"), let gamma = values("gamma"),
            let beta = values("beta"), let mean, let variance, mean.count == variance.count
        else { return nil }
        let count = mean.count
        guard (gamma?.count ?? count) == count, (beta?.count ?? count) == count else { return nil }
        var scale: [Float] = []
        var shift: [Float] = []
        for c in 0..<count {
            let s = (gamma?[c] ?? 1) / (variance[c] + epsilon).squareRoot()
            scale.append(Float(s))
            shift.append(Float((beta?[c] ?? 0) - mean[c] * s))
        }
        return (
            MILConstant(shape: [count], dataType: .float32, elements: .floats(scale)),
            MILConstant(shape: [count], dataType: .float32, elements: .floats(shift))
        )
    }
}

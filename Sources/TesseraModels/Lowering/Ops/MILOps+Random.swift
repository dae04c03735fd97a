import TesseraTensor

/// The random ops: `random_normal` (`mean`, `stddev`), `random_uniform` (`low`, `high`),
/// `random_bernoulli` (`prob`: 1 with that probability, else 0) of a `shape` (constant or
/// computed at run time), and `random_categorical` (`size` class indices drawn per row of
/// `x`'s last axis, `x` holding `logits` (the default) or `probs`; the result has `x`'s shape
/// with the last axis replaced by `size`; drawn by
/// ``MILOp/categoricalSamples(_:name:logits:temperature:samples:seed:)``). Results are Float32.
///
/// Seeds: MIL's `seed` defaults to −1, "no seed", and every prediction then draws fresh
/// values. A seed ≥ 0 makes the op deterministic: every prediction of the model gives the
/// same values, on any machine and thread count (the Philox-4×32-10 stream of
/// `MLTensor(randomUniform:)`, or of `MLTensor.multinomial` for `random_categorical`, keyed
/// by the seed). The stream is Tessera's own: Core ML does not specify its generator, so a
/// seeded model gives other values than on Apple's devices, with the same distribution.
/// coremltools' tests check only what does not depend on the stream (`stddev` 0, `prob` 0 or
/// 1, `low == high`, one class).
extension MILOp {
    static let randomOps: [MILOp] = [
        MILOp("random_normal", batch: .notSeparable, cost: .transcendental) { lowering in
            let shape = try lowering.required(lowering.runtimeInts("shape"), "shape")
            let mean = try lowering.runtimeNumber("mean") ?? .constant(0)
            let deviation = try lowering.runtimeNumber("stddev") ?? .constant(1)
            let seed = try randomSeed(lowering)
            return { args in
                let dimensions = try randomShape(shape.values(args))
                let samples = MLTensor(
                    randomNormal: dimensions, mean: 0, standardDeviation: 1, seed: seed, scalarType: Float.self)
                return [samples * Float(try deviation.value(args)) + Float(try mean.value(args))]
            }
        },
        MILOp("random_uniform", batch: .notSeparable, cost: .elementwise) { lowering in
            let shape = try lowering.required(lowering.runtimeInts("shape"), "shape")
            let low = try lowering.runtimeNumber("low") ?? .constant(0)
            let high = try lowering.runtimeNumber("high") ?? .constant(1)
            let seed = try randomSeed(lowering)
            return { args in
                let dimensions = try randomShape(shape.values(args))
                let (a, b) = (Float(try low.value(args)), Float(try high.value(args)))
                let u = MLTensor(randomUniform: dimensions, in: 0..<1, seed: seed, scalarType: Float.self)
                return [u * (b - a) + a]
            }
        },
        MILOp("random_bernoulli", batch: .notSeparable, cost: .elementwise) { lowering in
            let shape = try lowering.required(lowering.runtimeInts("shape"), "shape")
            let probability = try lowering.runtimeNumber("prob") ?? .constant(0.5)
            let seed = try randomSeed(lowering)
            return { args in
                let dimensions = try randomShape(shape.values(args))
                let p = Float(try probability.value(args))
                let u = MLTensor(randomUniform: dimensions, in: 0..<1, seed: seed, scalarType: Float.self)
                // u < p holds with probability p: never for p = 0, always for p = 1.
                return [(u .< u.scalar(Double(p))).asFloat]
            }
        },
        MILOp("random_categorical", batch: .notSeparable, cost: .elementwise) { lowering in
            let x = try lowering.tensor("x")
            let mode = try lowering.string("mode") ?? "logits"
            guard mode == "logits" || mode == "probs" else {
                throw lowering.invalid("mode '\(mode)' must be 'logits' or 'probs'")
            }
            let size = try lowering.int("size") ?? 1
            guard size >= 1 else { throw lowering.invalid("size \(size) must be positive") }
            let seed = try randomSeed(lowering)
            return { args in
                [try categoricalSamples(args[x], name: "x", logits: mode == "logits", samples: size, seed: seed)]
            }
        },
    ]

    /// Class indices drawn from a categorical distribution per row of `values`' last axis:
    /// the one home of MIL `random_categorical` and the NeuralNetwork `categoricalDistribution`
    /// layer.
    ///
    /// `values` (any floating-point type, shape `[..., classes]`) holds logits (`logits`:
    /// divided by `temperature`, then softmax) or probabilities (any non-negative weights,
    /// normalised by their row's sum). The draws are
    /// ``MLTensor/multinomial(sampleCount:seed:lenient:)`` (Philox uniforms, inverse CDF by
    /// binary search: O(classes + samples · log classes) per row), leniently, since the values
    /// are a prediction's: a weight that is negative or not finite (including what softmax
    /// makes of a NaN or infinite logit) counts as 0, and a row with no positive weight left
    /// (all-zero probabilities, a NaN logit) draws class 0 for every sample. The result is
    /// Float32 `[..., samples]`.
    ///
    /// ```swift
    /// // values [2, 3] logits → [2, 5] class indices in 0...2
    /// let drawn = try MILOp.categoricalSamples(values, name: "x", logits: true, samples: 5, seed: 7)
    /// ```
    ///
    /// Throws ``OperandError`` (naming the operand `name`) for a rank-0 or empty class axis,
    /// and when `[..., samples]` is too large (``LoweredFunction/requireHostValue(shape:_:)``).
    static func categoricalSamples(
        _ values: MLTensor, name: String, logits: Bool, temperature: Float = 1, samples: Int, seed: UInt64?
    ) throws -> MLTensor {
        let v = values.asFloat
        try require(v.rank >= 1 && v.shape[v.rank - 1] >= 1, "\(name) \(v.shape) needs a non-empty class axis")
        try LoweredFunction.requireHostValue(shape: Array(v.shape.dropLast()) + [samples], "the samples")
        let weights = logits ? (temperature == 1 ? v : v / temperature).softmax(alongAxis: -1) : v
        return weights.multinomial(sampleCount: samples, seed: seed, lenient: true).asFloat
    }

    /// The op's `seed`: `nil` (fresh values every prediction) when absent or negative.
    static func randomSeed(_ lowering: OperationLowering) throws -> UInt64? {
        guard let values = try lowering.unclampedInts("seed") else { return nil }
        guard values.count == 1 else { throw lowering.invalid("parameter 'seed' must be one integer, got \(values)") }
        return values[0] >= 0 ? UInt64(values[0]) : nil
    }

    /// A `shape` parameter as dimensions, checked as a value made on the host
    /// (``LoweredFunction/requireHostValue(shape:_:)``: the draws are made one by one).
    static func randomShape(_ values: [Int]) throws -> [Int] {
        try LoweredFunction.requireHostValue(shape: values, "the random shape")
        return values
    }
}

import Foundation
import Testing

@testable import TesseraModels

/// The MIL op registry: one registration per op type, each with a lowering, a batching rule
/// and a cost, and nothing the string tables it replaced knew lost.
@Suite("MIL op registry")
struct MILOpRegistryTests {
    /// Every op type the lowering handled before the registry (its seven handler tables, the
    /// driver's `const`, `constexpr_*` and `write_state` cases).
    static let previouslyLowered: Set<String> = [
        "add", "sub", "mul", "pow", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
        "greater_equal", "logical_and", "logical_or", "logical_xor", "mod", "real_div", "floor_div", "abs", "acos",
        "asin", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp", "exp2", "floor", "round", "sign", "sin", "sinh",
        "sqrt", "square", "tan", "tanh", "sigmoid", "log", "rsqrt", "inverse", "logical_not", "identity", "cast",
        "select", "relu", "relu6", "clip", "threshold", "leaky_relu", "elu", "thresholded_relu", "linear_activation",
        "scaled_tanh", "sigmoid_hard", "clamped_relu", "silu", "softsign", "softplus", "softplus_parametric", "gelu",
        "prelu", "linear", "matmul", "scaled_dot_product_attention", "conv", "conv_transpose", "max_pool", "avg_pool",
        "upsample_nearest_neighbor", "upsample_bilinear", "crop", "resize_nearest_neighbor", "softmax", "layer_norm",
        "instance_norm", "l2_norm", "local_response_norm", "batch_norm", "reduce_sum", "reduce_mean", "reduce_max",
        "reduce_min", "reduce_prod", "reduce_sum_square", "reduce_l1_norm", "reduce_l2_norm", "reduce_log_sum",
        "reduce_log_sum_exp", "reduce_argmax", "reduce_argmin", "reshape", "transpose", "read_state",
        "coreml_update_state", "reshape_like", "expand_dims", "squeeze", "flatten2d", "concat", "stack", "split",
        "tile", "pad", "reverse", "fill", "band_part", "pixel_shuffle", "pixel_unshuffle", "one_hot", "range_1d",
        "depth_to_space", "space_to_depth", "sliding_windows", "shape", "fill_like", "cumsum", "slice_by_index",
        "slice_by_size", "gather", "gather_along_axis", "reverse_sequence", "gather_nd", "topk", "argsort",
        "scatter_along_axis", "classify", "const", "constexpr_affine_dequantize", "constexpr_cast",
        "constexpr_lut_to_dense", "constexpr_sparse_to_dense", "constexpr_blockwise_shift_scale", "write_state",
    ]

    /// The old batching table's fixed rules (`BatchRule.decide`'s sets).
    static let elementwiseTypes: Set<String> = [
        "add", "sub", "mul", "pow", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
        "greater_equal", "logical_and", "logical_or", "logical_xor", "mod", "real_div", "floor_div", "abs", "acos",
        "asin", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp", "exp2", "floor", "round", "sign", "sin", "sinh",
        "sqrt", "square", "tan", "tanh", "sigmoid", "log", "rsqrt", "inverse", "logical_not", "identity", "cast",
        "select", "relu", "relu6", "clip", "threshold", "leaky_relu", "elu", "thresholded_relu", "linear_activation",
        "scaled_tanh", "sigmoid_hard", "clamped_relu", "silu", "softsign", "softplus", "gelu", "fill_like",
    ]
    static let leadingAxisTypes: Set<String> = [
        "conv", "conv_transpose", "max_pool", "avg_pool", "batch_norm", "instance_norm", "prelu",
        "softplus_parametric", "upsample_nearest_neighbor", "upsample_bilinear", "resize_nearest_neighbor", "crop",
        "pixel_shuffle", "pixel_unshuffle", "depth_to_space", "space_to_depth",
    ]
    static let reductionTypes: Set<String> = [
        "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_sum_square",
        "reduce_l1_norm", "reduce_l2_norm", "reduce_log_sum", "reduce_log_sum_exp",
    ]
    /// The old table's rules for an op without parameters (a required one missing makes the
    /// rule unreadable, hence not separable).
    static let parameterlessRules: [String: BatchRule] = [
        "reduce_argmax": .reduction(axes: [-1], keepDims: false),
        "reduce_argmin": .reduction(axes: [-1], keepDims: false),
        "softmax": .alongAxes([-1]), "layer_norm": .alongAxes(nil), "l2_norm": .alongAxes([-3, -2, -1]),
        "local_response_norm": .alongAxes([-3]), "cumsum": .alongAxes([0]), "reverse": .alongAxes(nil),
        "band_part": .alongAxes([-2, -1]), "reshape": .reshape, "reshape_like": .reshape, "expand_dims": .reshape,
        "squeeze": .reshape, "flatten2d": .reshape, "matmul": .matmul(transposeX: false, transposeY: false),
        "linear": .linear, "scaled_dot_product_attention": .attention,
        "slice_by_index": .slice(strides: nil, squeeze: nil), "slice_by_size": .slice(strides: nil, squeeze: nil),
        "gather": .gather(axis: 0), "shape": .shapeOf,
    ]

    /// The old cost table (`OperationCostModel.estimate`'s switch) as categories.
    static func previousCost(_ type: String) -> MILOpCost {
        switch type {
        case "const": .loadTime
        case let t where t.hasPrefix("constexpr_"): .loadTime
        case "conv": .convolution
        case "conv_transpose": .transposedConvolution
        case "linear": .linear
        case "matmul": .matmul
        case "scaled_dot_product_attention": .attention
        case let t where t.hasPrefix("reduce_"): .reduction
        case let t where t.hasPrefix("gather") || t.hasPrefix("slice") || t == "reshape": .dataMovement
        case "softmax", "exp", "log", "tanh", "sigmoid", "gelu", "silu", "erf", "sin", "cos", "pow", "sqrt", "rsqrt",
            "layer_norm", "batch_norm", "instance_norm", "local_response_norm":
            .transcendental
        default: .elementwise
        }
    }

    /// A lowering of an op of `type` with no parameters, for reading its batching rule.
    static func parameterless(_ type: String) throws -> OperationLowering {
        let package = try #require(LoweringFixture.named("relu")).package()
        let operation = MILOperation(type: type, inputs: [:], outputs: [], blocks: [], attributes: [:])
        return OperationLowering(operation: operation, context: LoweringContext(package: package))
    }

    @Test("every area's ops are in the table once, under their own names")
    func everyOpOnce() {
        let all = MILOpRegistry.areas.flatMap { $0 }
        #expect(MILOpRegistry.ops.count == all.count)
        for op in all {
            #expect(!op.name.isEmpty)
            #expect(MILOpRegistry.op(named: op.name)?.name == op.name)
        }
    }

    @Test("every op type the lowering knew before the registry is registered")
    func nothingLost() {
        let missing = Self.previouslyLowered.subtracting(MILOpRegistry.names)
        #expect(missing.isEmpty, "no longer registered: \(missing.sorted())")
        #expect(LoweredFunction.supportedOperationTypes == MILOpRegistry.names)
    }

    @Test("each op's batching rule is the one the old table gave it")
    func batchingRules() throws {
        for op in MILOpRegistry.ops.values.sorted(by: { $0.name < $1.name })
        where Self.previouslyLowered.contains(op.name) {
            let rule: BatchRule
            switch op.lowering {
            case .atLoad(_, let buildsTensors):
                #expect(["const", "write_state"].contains(op.name) || op.name.hasPrefix("constexpr_"), "\(op.name)")
                // Only const, which records a value, runs outside the shape-check scope.
                #expect(buildsTensors == (op.name != "const"), "\(op.name)")
                continue
            case .step(_, let batch): rule = batch.rule(for: try Self.parameterless(op.name))
            }
            let expected: BatchRule
            if Self.elementwiseTypes.contains(op.name) {
                expected = .elementwise
            } else if Self.leadingAxisTypes.contains(op.name) {
                expected = .leadingAxis
            } else if Self.reductionTypes.contains(op.name) {
                expected = .reduction(axes: nil, keepDims: false)
            } else {
                expected = Self.parameterlessRules[op.name] ?? .notSeparable
            }
            #expect(rule == expected, "\(op.name)")
        }
    }

    @Test("each op's cost is the one the old cost table gave it")
    func costs() {
        for op in MILOpRegistry.ops.values where Self.previouslyLowered.contains(op.name) {
            #expect(op.cost == Self.previousCost(op.name), "\(op.name)")
        }
        #expect(OperationCostModel.isLoadTimeConstant("const"))
        #expect(OperationCostModel.isLoadTimeConstant("constexpr_not_yet_known"))
        #expect(!OperationCostModel.isLoadTimeConstant("conv"))
        #expect(OperationCostModel.cost(of: "random_bernoulli") == .elementwise)
    }

    @Test("a name registered twice stops the program, naming the op type")
    func duplicateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let op = MILOp(atLoad: "twice", cost: .loadTime) { _ in }
            _ = MILOpRegistry.table([op, op])
        }
        let message = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(message.contains("[MILOpRegistry] the op type 'twice' is registered twice"), "\(message)")
    }
}

import TesseraKernels

extension GraphOp {
    /// The family that holds this op's rule, kind and kernel binding (one file under `Ops/`
    /// each). This is the only switch over the ops that knows what they do.
    package var rule: any OpRule.Type {
        switch self {
        case .constant: ConstantRule.self
        case .unary, .binary, .select, .cast: ElementwiseRule.self
        case .reduce: ReduceRule.self
        case .softmax, .logSoftmax: SoftmaxRule.self
        case .scan: ScanRule.self
        case .matmul: MatMulRule.self
        case .reshape, .broadcast, .permute, .slice: ViewRule.self
        case .concat: ConcatRule.self
        case .pad: PadRule.self
        case .gather, .gatherElements, .gatherND: GatherRule.self
        case .tile: TileRule.self
        case .conv2d: Conv2DRule.self
        case .maxPool2d, .averagePool2d: Pool2DRule.self
        case .argsort: ArgsortRule.self
        case .scatter: ScatterRule.self
        case .resize: ResizeRule.self
        case .multinomial: MultinomialRule.self
        case .nonMaximumSuppression: NonMaximumSuppressionRule.self
        case .recurrent: RecurrentRule.self
        case .attention: AttentionRule.self
        }
    }

    /// The result shape and type of the op on inputs of the given shapes and types (the op's
    /// ``rule``).
    ///
    /// Throws an ``OpError`` whose message names the op and the shapes when the inputs do not
    /// fit.
    func inferShapeAndType(_ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        try rule.infer(self, inputs)
    }
}

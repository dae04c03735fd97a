/// One NeuralNetwork layer type Tessera runs: its `NeuralNetworkLayer.layer` field number,
/// how it lowers onto the `MLTensor` API and what it costs.
///
/// The counterpart of ``MILOp`` for the pre-ML-Program format. A layer type appears in
/// ``NeuralNetworkLayerRegistry`` through its family's list
/// (`NeuralNetwork/Layers/NeuralNetworkLayers+<Family>.swift`):
///
/// ```swift
/// NeuralNetworkLayerType(field: 665, cost: .elementwise) { layer in   // ceil
///     { args in [args[0].asFloat.ceil()] }
/// }
/// ```
struct NeuralNetworkLayerType: Sendable {
    /// The field number of the layer's alternative in `NeuralNetworkLayer.layer`.
    let field: Int
    /// How ``MLComputePlan`` estimates the layer's work.
    let cost: MILOpCost
    /// Reads the layer's parameters at load (decoding its weights once) and returns the
    /// closure that builds its results from its input blobs (operands `0..<inputs.count`,
    /// then any constants the lowering registered).
    let lower: @Sendable (inout NeuralNetworkLayerLowering) throws -> LoweredCompute
    /// Input positions whose elements the built closure reads while the graph is built (a
    /// dynamic reshape target, slice bound or fill shape), so later shapes follow their
    /// values; see ``LoweredStep/valueReads``.
    let valueReads: [Int]

    /// A layer type.
    init(
        field: Int, cost: MILOpCost, valueReads: [Int] = [],
        lower: @escaping @Sendable (inout NeuralNetworkLayerLowering) throws -> LoweredCompute
    ) {
        self.field = field
        self.cost = cost
        self.valueReads = valueReads
        self.lower = lower
    }

    /// The type's name in `NeuralNetwork.proto` (`convolution`, …).
    var name: String { NeuralNetworkLayerTypes.names[field] ?? "layer field \(field)" }
}

/// Every NeuralNetwork layer type Tessera runs, by field number.
enum NeuralNetworkLayerRegistry {
    /// The family lists, one per file under `NeuralNetwork/Layers/`.
    static let families: [[NeuralNetworkLayerType]] = [
        NeuralNetworkLayerType.convolutionLayers, NeuralNetworkLayerType.activationLayers,
        NeuralNetworkLayerType.normalizationLayers, NeuralNetworkLayerType.elementwiseLayers,
        NeuralNetworkLayerType.unaryLayers, NeuralNetworkLayerType.shapeLayers,
        NeuralNetworkLayerType.reductionLayers, NeuralNetworkLayerType.linearAlgebraLayers,
        NeuralNetworkLayerType.indexingLayers, NeuralNetworkLayerType.generatorLayers,
        NeuralNetworkLayerType.recurrentLayers, NeuralNetworkLayerType.scatterLayers,
        NeuralNetworkLayerType.sequenceLayers, NeuralNetworkLayerType.randomLayers,
        NeuralNetworkLayerType.volumeLayers, NeuralNetworkLayerType.detectionLayers,
        NeuralNetworkLayerType.resizingLayers,
    ]

    /// Every registered layer type by field number.
    ///
    /// - Precondition: No field number is registered twice.
    static let types: [Int: NeuralNetworkLayerType] = {
        var table: [Int: NeuralNetworkLayerType] = [:]
        for type in families.joined() {
            precondition(table[type.field] == nil, "[NeuralNetworkLayerRegistry] '\(type.name)' is registered twice")
            table[type.field] = type
        }
        return table
    }()

    /// The names of every supported layer type, sorted.
    static var names: [String] { types.values.map(\.name).sorted() }
}

extension CoreMLSpec {
    /// A NeuralNetwork model (`NeuralNetwork.proto`): the pre-ML-Program Core ML format of
    /// specification versions 1–8, a list of layers with their weights inline.
    ///
    /// One type holds the three model kinds that share the message layout
    /// (`neuralNetwork = 500`, `neuralNetworkClassifier = 403`, `neuralNetworkRegressor =
    /// 303`); a classifier also has its labels and the name of its probability layer.
    package struct NeuralNetwork: Sendable, Equatable {
        /// Which `Model` alternative the network came from.
        package enum Kind: Sendable, Equatable {
            /// `neuralNetwork`.
            case plain
            /// `neuralNetworkClassifier`: ``classLabels`` are set.
            case classifier
            /// `neuralNetworkRegressor`.
            case regressor
        }

        /// How multi-array inputs become tensors (`NeuralNetworkMultiArrayShapeMapping`).
        package enum ArrayShapeMapping: Int, Sendable, Equatable {
            /// `RANK5_ARRAY_MAPPING`: a `[C]` input becomes `[1, 1, C, 1, 1]`, a `[C, H, W]`
            /// input `[1, 1, C, H, W]` (axes `[Seq, Batch, C, H, W]`).
            case rank5 = 0
            /// `EXACT_ARRAY_MAPPING`: the declared shape is passed through (spec ≥ 4).
            case exact = 1
        }

        /// How image inputs become tensors (`NeuralNetworkImageShapeMapping`).
        package enum ImageShapeMapping: Int, Sendable, Equatable {
            /// `RANK5_IMAGE_MAPPING`: `[1, 1, C, H, W]`.
            case rank5 = 0
            /// `RANK4_IMAGE_MAPPING`: `[1, C, H, W]`.
            case rank4 = 1
        }

        /// The model kind.
        package var kind: Kind = .plain
        /// The layers, in the file's (topological) order.
        package var layers: [NeuralNetworkLayer] = []
        /// Per-input preprocessing (scaler, mean image).
        package var preprocessing: [NeuralNetworkPreprocessing] = []
        /// How multi-array inputs are shaped.
        package var arrayInputShapeMapping: ArrayShapeMapping = .rank5
        /// How image inputs are shaped.
        package var imageInputShapeMapping: ImageShapeMapping = .rank5
        /// Whether the file carries on-device training parameters (`updateParams`); Tessera
        /// reads and ignores them.
        package var hasUpdateParameters = false
        /// A classifier's labels (`stringClassLabels = 100` / `int64ClassLabels = 101`).
        package var classLabels: ClassLabels?
        /// The layer output holding a classifier's probabilities (`labelProbabilityLayerName
        /// = 200`); empty means the output named like the model's probabilities output.
        package var labelProbabilityLayerName = ""
    }

    /// One layer of a NeuralNetwork (`NeuralNetworkLayer`).
    package struct NeuralNetworkLayer: Sendable, Equatable {
        /// `name = 1`.
        package var name = ""
        /// `input = 2`: the blobs it reads.
        package var inputs: [String] = []
        /// `output = 3`: the blobs it defines.
        package var outputs: [String] = []
        /// `inputTensor = 4`: the declared rank of each input (spec ≥ 4), when given.
        package var inputRanks: [Int] = []
        /// `outputTensor = 5`: the declared rank and dimensions (−1 unknown) of each output.
        package var outputTensors: [(rank: Int, dimensions: [Int])] = []
        /// `isUpdatable = 10`.
        package var isUpdatable = false
        /// The field number of the `layer` oneof alternative that is set (`convolution = 100`,
        /// …), 0 when none is.
        package var typeField = 0
        /// The alternative's parameter message, undecoded beyond its fields.
        var parameters = ProtobufFieldTable()

        /// The layer type's name in `NeuralNetwork.proto` (`convolution`, `innerProduct`, …).
        package var typeName: String { NeuralNetworkLayerTypes.names[typeField] ?? "layer field \(typeField)" }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.name == rhs.name && lhs.inputs == rhs.inputs && lhs.outputs == rhs.outputs
                && lhs.typeField == rhs.typeField && lhs.parameters == rhs.parameters
                && lhs.inputRanks == rhs.inputRanks && lhs.isUpdatable == rhs.isUpdatable
                && lhs.outputTensors.map(\.rank) == rhs.outputTensors.map(\.rank)
                && lhs.outputTensors.map(\.dimensions) == rhs.outputTensors.map(\.dimensions)
        }
    }

    /// Preprocessing of one input (`NeuralNetworkPreprocessing`): a scale and per-channel
    /// bias, or a mean image to subtract.
    package struct NeuralNetworkPreprocessing: Sendable, Equatable {
        /// What is applied.
        package enum Operation: Sendable, Equatable {
            /// `scaler = 10`: `channelScale · x + bias[c]`.
            case scaler(channelScale: Float, blueBias: Float, greenBias: Float, redBias: Float, grayBias: Float)
            /// `meanImage = 11`: `x − mean`, the mean flattened from `[C, H, W]`.
            case meanImage([Float])
        }

        /// `featureName = 1`: the input it applies to (empty: the only input).
        package var featureName = ""
        /// The operation, `nil` when the message sets none.
        package var operation: Operation?
    }
}

extension CoreMLSpec.NeuralNetwork {
    /// What `tessera describe` prints about the network: its layer types by count, the input
    /// shape mapping, preprocessing, and a note when training fields are present (Tessera
    /// reads and ignores them) or a layer type is not supported.
    ///
    /// ```
    /// layers (11, exact array mapping): convolution 3, activation 2, pooling 2, …
    /// ```
    package var summaryLines: [String] {
        var counts: [String: Int] = [:]
        for layer in layers { counts[layer.typeName, default: 0] += 1 }
        let listed = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }
        let mapping = arrayInputShapeMapping == .rank5 ? "rank-5 array mapping" : "exact array mapping"
        var lines = ["layers (\(layers.count), \(mapping)): " + listed.joined(separator: ", ")]
        for step in preprocessing {
            let what =
                switch step.operation {
                case .scaler?: "scaler"
                case .meanImage?: "mean image"
                case nil: "none"
                }
            lines.append("preprocessing of \(step.featureName.isEmpty ? "the input" : step.featureName): \(what)")
        }
        let unsupported = Set(layers.map(\.typeField)).subtracting(NeuralNetworkLayerRegistry.types.keys)
            .subtracting(NeuralNetworkFunctionBuilder.controlFlowFields)
        if !unsupported.isEmpty {
            let names = unsupported.map { NeuralNetworkLayerTypes.names[$0] ?? "layer field \($0)" }.sorted()
            lines.append("not supported by Tessera: " + names.joined(separator: ", "))
        }
        if hasUpdateParameters || layers.contains(where: \.isUpdatable) {
            lines.append("note: the model is updatable; Tessera reads its training parameters and ignores them")
        }
        return lines
    }
}

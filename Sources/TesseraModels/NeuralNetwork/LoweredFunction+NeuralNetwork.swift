import TesseraKernels
import TesseraTensor

extension LoweredFunction {
    /// Lowers a NeuralNetwork model (`neuralNetwork`, `neuralNetworkClassifier` or
    /// `neuralNetworkRegressor`) once, into the same kind of function an ML program lowers
    /// to: prediction, batching, compute plans and the CLI run it the same way.
    ///
    /// Each multi-array input becomes a tensor as the network's `arrayInputShapeMapping`
    /// says (`[C]` → `[1, 1, C, 1, 1]` and `[C, H, W]` → `[1, 1, C, H, W]` for the legacy
    /// rank-5 mapping, the declared shape for the exact one), then its `preprocessing` is
    /// applied. Every layer is lowered through ``NeuralNetworkLayerRegistry``, its weights
    /// decoded to Float32 here (float16 widened, quantized weights dequantized). Each output
    /// is the blob of its name, reshaped to the declared shape when the element counts agree.
    /// A classifier returns its probabilities (the blob `labelProbabilityLayerName` names,
    /// else the one named like the probabilities output) flattened to 1-D under the
    /// probabilities output's name; `MLModel` adds the label.
    ///
    /// ```swift
    /// let package = try CoreMLPackage(contentsOf: url)
    /// let function = try LoweredFunction(
    ///     neuralNetwork: package.model.neuralNetwork!, description: package.model.description,
    ///     file: package.modelDisplayName)
    /// ```
    ///
    /// - Parameters:
    ///   - network: The decoded network.
    ///   - description: The model's description (inputs, outputs, classifier names).
    ///   - file: The specification file's name, for messages.
    /// - Throws: ``ModelFormatError`` naming the layer, its type and the model for a layer
    ///   type Tessera does not run (custom layers included), a layer that reads an undefined
    ///   blob, weights whose size disagrees with the layer's shape, bad quantization
    ///   parameters, or an input of a rank the shape mapping does not allow; nothing traps.
    package init(
        neuralNetwork network: CoreMLSpec.NeuralNetwork, description: CoreMLSpec.ModelDescription, file: String
    ) throws {
        var builder = NeuralNetworkFunctionBuilder(network: network, file: file)
        for input in description.inputs { try builder.bindInput(input) }
        for layer in network.layers { try builder.lower(layer) }
        let outputs = try builder.outputs(description)
        self.inputs = builder.inputs
        self.inputSlots = builder.inputSlots
        self.outputNames = outputs.map(\.name)
        self.outputSlots = outputs.map { ($0.slot, $0.type) }
        self.stateOutputs = []
        self.classifier = nil
        self.file = file
        self.steps = builder.steps
        self.slotCount = builder.slotCount
        self.constantTensors = builder.constantTensors
        // NeuralNetwork layers compute in Float32 (Core ML's CPU path for them); no fp16 rounding.
        self.float16Rounding = .none
    }
}

/// The value table and steps of a NeuralNetwork being lowered (used only by
/// ``LoweredFunction/init(neuralNetwork:description:file:)``).
struct NeuralNetworkFunctionBuilder {
    let network: CoreMLSpec.NeuralNetwork
    let file: String
    private(set) var inputs: [(name: String, type: MILValueType)] = []
    private(set) var inputSlots: [Int] = []
    var steps: [LoweredStep] = []
    private(set) var slotCount = 0
    private(set) var constantTensors: [(slot: Int, tensor: MLTensor)] = []
    /// The slot of every blob defined so far (in the network being lowered: a control-flow
    /// layer's network starts from its enclosing scope's).
    var blobs: [String: Int] = [:]
    /// The slots each blob was given in the network being lowered, in order (a `copy` layer
    /// may overwrite a blob); see ``LoweredBlock/outputDefinitions``.
    var definitions: [String: [Int]] = [:]
    /// How many `loop` bodies enclose the network being lowered (`loopBreak` and
    /// `loopContinue` need one).
    var loopDepth = 0
    /// How many control-flow layers enclose the network being lowered.
    var nestingDepth = 0

    init(network: CoreMLSpec.NeuralNetwork, file: String) {
        self.network = network
        self.file = file
    }

    mutating func newSlot() -> Int {
        slotCount += 1
        return slotCount - 1
    }

    func error(_ kind: ModelFormatError.Kind, _ message: String) -> ModelFormatError {
        ModelFormatError(kind, file: file, message)
    }

    /// Declares a model input and the step that maps it to the network's layout and applies
    /// its preprocessing.
    ///
    /// A multi-array input is taken in its declared shape. An image input arrives as the
    /// `[C, H, W]` (rank-5 image mapping) or `[1, C, H, W]` (rank-4 mapping) Float32 tensor of
    /// raw 0–255 pixel values that `MLModel` makes from the pixel buffer, channels in the
    /// declared color space's order; the network's `preprocessing` scaler then applies its
    /// scale and per-channel biases (in that channel order), as Core ML does.
    mutating func bindInput(_ feature: CoreMLSpec.FeatureDescription) throws {
        let isRank5 = network.arrayInputShapeMapping == .rank5
        let shape: [Int]
        let isFlexible: Bool
        let dataType: MILDataType
        var channelOrder = NeuralNetworkFunctionBuilder.ChannelOrder.rgb
        switch feature.type.kind {
        case .multiArray(let array):
            shape = array.shape
            isFlexible = array.shapeFlexibility != nil
            let rank = array.shape.count
            if isRank5 && rank != 1 && rank != 3 {
                throw error(
                    .invalidSpecification,
                    "input '\(feature.name)' has shape \(array.shape) (rank \(rank)); the network's rank-5 array "
                        + "shape mapping takes rank 1 ([C]) or rank 3 ([C, H, W]) inputs only")
            }
            dataType =
                switch array.dataType {
                case .double: .float64
                case .int32: .int32
                case .float16: .float16
                case .int8: .int8
                case .float32, nil: .float32
                }
        case .image(let image):
            let channels: Int
            switch image.colorSpace {
            case .rgb: channels = 3
            case .bgr: (channels, channelOrder) = (3, .bgr)
            case .grayscale, .grayscaleFloat16: channels = 1
            case .invalid:
                throw error(.invalidSpecification, "image input '\(feature.name)' declares no color space")
            }
            let planar = [channels, image.height, image.width]
            shape = network.imageInputShapeMapping == .rank5 ? planar : [1] + planar
            isFlexible = image.sizeFlexibility != nil
            dataType = .float32
        default:
            throw error(
                .unsupportedModelType,
                "input '\(feature.name)' is a \(feature.type.kind); Tessera runs NeuralNetwork models whose inputs "
                    + "are multi-arrays or images")
        }
        let rank = shape.count
        let dimensions: [MILDimension] =
            isFlexible ? shape.map { _ in .unknown(variadic: false) } : shape.map { .constant($0) }
        let type = MILValueType.tensor(MILTensorType(dataType: dataType, rank: rank, dimensions: dimensions))
        let slot = newSlot()
        inputs.append((feature.name, type))
        inputSlots.append(slot)

        let preprocessing = network.preprocessing.first {
            $0.featureName == feature.name || ($0.featureName.isEmpty && network.preprocessing.count == 1)
        }?.operation
        let mapped = newSlot()
        let name = feature.name
        let order = channelOrder
        let compute: LoweredCompute = { args in
            var x = args[0].asFloat
            if let preprocessing {
                x = try NeuralNetworkFunctionBuilder.preprocess(x, preprocessing, input: name, channelOrder: order)
            }
            guard isRank5 else { return [x] }
            return [x.reshapedIfNeeded(to: x.rank == 1 ? [1, 1, x.shape[0], 1, 1] : [1, 1] + x.shape)]
        }
        steps.append(
            LoweredStep(
                type: "input", name: name, operands: [slot], results: [mapped], declaredShapes: [nil],
                batchRule: .notSeparable, compute: compute))
        blobs[name] = mapped
    }

    /// The order of a three-channel input's channels, which decides where the scaler's
    /// `redBias`, `greenBias` and `blueBias` go.
    enum ChannelOrder: Sendable {
        /// Red first: multi-arrays and RGB images.
        case rgb
        /// Blue first: BGR images.
        case bgr
    }

    /// Applies a scaler or mean image to a `[C]` or `[C, H, W]` (or exact-rank `[…, C, H, W]`)
    /// multi-array input.
    ///
    /// The scaler's biases are per channel: `grayBias` for one channel, `redBias`,
    /// `greenBias`, `blueBias` for three (in `channelOrder`: RGB for a multi-array and an RGB
    /// image, BGR for a BGR image), none otherwise.
    static func preprocess(
        _ x: MLTensor, _ operation: CoreMLSpec.NeuralNetworkPreprocessing.Operation, input: String,
        channelOrder: ChannelOrder = .rgb
    ) throws -> MLTensor {
        let channels = x.rank >= 3 ? x.shape[x.rank - 3] : x.shape.last ?? 1
        let channelShape = x.rank >= 3 ? [channels, 1, 1] : [channels]
        switch operation {
        case .scaler(let scale, let blue, let green, let red, let gray):
            var y = x * scale
            if channels == 1, gray != 0 {
                y = y + gray
            } else if channels == 3 {
                let biases = channelOrder == .rgb ? [red, green, blue] : [blue, green, red]
                y = y + MLTensor(shape: channelShape, scalars: biases, scalarType: Float.self)
            }
            return y
        case .meanImage(let mean):
            let count = x.rank >= 3 ? x.shape.suffix(3).reduce(1, *) : x.scalarCount
            try require(
                mean.count == count,
                "the mean image of input '\(input)' has \(mean.count) values; the input's [C, H, W] has \(count)")
            let shape = x.rank >= 3 ? Array(x.shape.suffix(3)) : x.shape
            return x - MLTensor(shape: shape, scalars: mean, scalarType: Float.self)
        }
    }

    /// Binds blob `name` to `slot` in the network being lowered.
    mutating func define(_ name: String, _ slot: Int) {
        blobs[name] = slot
        definitions[name, default: []].append(slot)
    }

    /// Lowers one layer into a step.
    mutating func lower(_ layer: CoreMLSpec.NeuralNetworkLayer) throws {
        let label = "layer '\(layer.name)' (type '\(layer.typeName)')"
        if layer.typeField == 500 {
            throw error(
                .unsupportedModelType,
                "\(label) is a custom layer (class '\(layer.parameters.string(10))'); custom layers run code that "
                    + "ships with the app and are not supported by Tessera")
        }
        if NeuralNetworkFunctionBuilder.controlFlowFields.contains(layer.typeField) {
            return try lowerControlFlow(layer, label: label)
        }
        guard let type = NeuralNetworkLayerRegistry.types[layer.typeField] else {
            let what = layer.typeField == 0 ? "sets no layer type" : "is a layer type Tessera does not support"
            throw error(.unsupportedModelType, "\(label) \(what)")
        }
        guard !layer.outputs.isEmpty else { throw error(.invalidSpecification, "\(label) has no outputs") }
        var operands: [Int] = []
        for input in layer.inputs {
            guard let slot = blobs[input] else {
                throw error(
                    .invalidSpecification,
                    "\(label) reads '\(input)', which no model input or earlier layer defines")
            }
            operands.append(slot)
        }
        var lowering = NeuralNetworkLayerLowering(
            layer: layer, file: file, isRank5: network.arrayInputShapeMapping == .rank5)
        let compute: LoweredCompute
        do {
            compute = try MLTensor.withShapeChecks { try type.lower(&lowering) }
        } catch let problem as MLTensorShapeError {
            throw lowering.invalid(problem.message)
        } catch let problem as OperandError {
            throw lowering.invalid(problem.message)
        }
        for constant in lowering.constants {
            let slot = newSlot()
            constantTensors.append((slot, constant))
            operands.append(slot)
        }
        let results = layer.outputs.map { _ in newSlot() }
        for (name, slot) in zip(layer.outputs, results) { define(name, slot) }
        steps.append(
            LoweredStep(
                type: type.name, name: layer.name, operands: operands, results: results,
                declaredShapes: results.map { _ in nil },
                valueReads: type.valueReads.filter { $0 < layer.inputs.count }, batchRule: .notSeparable,
                compute: compute))
    }

    /// The model's outputs: each blob reshaped to its declared shape, a classifier's
    /// probabilities flattened.
    mutating func outputs(_ description: CoreMLSpec.ModelDescription) throws -> [(
        name: String, slot: Int, type: KernelScalarType?
    )] {
        let isClassifier = network.kind == .classifier
        let labelName = description.predictedFeatureName
        let probabilitiesName = description.predictedProbabilitiesName
        var result: [(name: String, slot: Int, type: KernelScalarType?)] = []
        for output in description.outputs {
            if isClassifier && (output.name == labelName || output.name == probabilitiesName) { continue }
            guard let blob = blobs[output.name] else {
                throw error(
                    .invalidSpecification, "the output '\(output.name)' is not produced by any layer of the network")
            }
            var declared: [Int] = []
            var type: KernelScalarType? = .float32
            if case .multiArray(let array) = output.type.kind {
                declared = array.shapeFlexibility == nil ? array.shape : []
                type = array.dataType == .double ? .float64 : array.dataType == .int32 ? .int32 : .float32
            } else if case .double = output.type.kind {
                type = .float64
            }
            result.append((output.name, appendReshape(blob, to: declared, name: output.name), type))
        }
        if isClassifier {
            let source = [network.labelProbabilityLayerName, probabilitiesName, labelName].first {
                !$0.isEmpty && blobs[$0] != nil
            }
            guard let source, let blob = blobs[source] else {
                throw error(
                    .invalidSpecification,
                    "the classifier's probabilities blob '\(network.labelProbabilityLayerName.nilIfEmpty ?? probabilitiesName)' "
                        + "is not produced by any layer of the network")
            }
            let slot = newSlot()
            steps.append(
                LoweredStep(
                    type: "classifier", name: source, operands: [blob], results: [slot], declaredShapes: [nil],
                    batchRule: .notSeparable, compute: { args in [args[0].asFloat.flattened()] }))
            result.append((probabilitiesName.nilIfEmpty ?? labelName, slot, .float32))
        }
        return result
    }

    /// A step reshaping `blob` to `declared` when it has that many elements (the rank-5
    /// layout back to the declared shape); `blob` itself when no shape is declared.
    private mutating func appendReshape(_ blob: Int, to declared: [Int], name: String) -> Int {
        guard !declared.isEmpty else { return blob }
        let slot = newSlot()
        let count = declared.checkedElementCount ?? -1  // a count no value has: left as it is
        steps.append(
            LoweredStep(
                type: "output", name: name, operands: [blob], results: [slot], declaredShapes: [nil],
                batchRule: .notSeparable,
                compute: { args in [args[0].scalarCount == count ? args[0].reshapedIfNeeded(to: declared) : args[0]] }))
        return slot
    }
}

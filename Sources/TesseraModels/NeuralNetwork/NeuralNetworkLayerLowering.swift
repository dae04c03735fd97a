import TesseraKernels
import TesseraTensor

/// Turns one NeuralNetwork layer into a ``LoweredCompute``: a layer type's lowering reads the
/// layer's parameter fields and weights through this type (at load) and registers the
/// constant operands its closure receives after the input blobs.
struct NeuralNetworkLayerLowering {
    /// The layer.
    let layer: CoreMLSpec.NeuralNetworkLayer
    /// The specification file's name, for messages.
    let file: String
    /// Whether inputs use the legacy rank-5 `[Seq, Batch, C, H, W]` layout.
    let isRank5: Bool
    /// The constants registered so far, in operand order after the inputs.
    private(set) var constants: [MLTensor] = []

    init(layer: CoreMLSpec.NeuralNetworkLayer, file: String, isRank5: Bool) {
        self.layer = layer
        self.file = file
        self.isRank5 = isRank5
    }

    /// The layer's parameter message.
    var params: ProtobufFieldTable { layer.parameters }

    /// The number of input blobs.
    var inputCount: Int { layer.inputs.count }

    /// A load error naming the model, the layer and its type.
    func invalid(_ message: String) -> ModelFormatError {
        ModelFormatError(
            .invalidSpecification, file: file, "layer '\(layer.name)' (type '\(layer.typeName)'): \(message)")
    }

    /// A load error for a form of the layer Tessera does not run.
    func unsupported(_ message: String) -> ModelFormatError {
        ModelFormatError(
            .unsupportedModelType, file: file,
            "layer '\(layer.name)' (type '\(layer.typeName)'): \(message) is not supported by Tessera")
    }

    /// Throws unless the layer has between `range.lowerBound` and `range.upperBound` inputs
    /// and `outputs` outputs.
    func requireCounts(inputs range: ClosedRange<Int>, outputs: Int? = 1) throws {
        guard range.contains(inputCount) else {
            let expected = range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound)–\(range.upperBound)"
            throw invalid("expected \(expected) inputs, got \(inputCount)")
        }
        if let outputs, layer.outputs.count != outputs {
            throw invalid("expected \(outputs) output\(outputs == 1 ? "" : "s"), got \(layer.outputs.count)")
        }
    }

    /// A nested parameter message.
    func message(_ field: Int, _ name: String) throws -> ProtobufFieldTable? {
        do { return try params.message(field, name) } catch let error as ModelFormatError {
            throw invalid(error.description)
        }
    }

    /// Every occurrence of a repeated message parameter.
    func messages(_ field: Int, _ name: String) throws -> [ProtobufFieldTable] {
        do { return try params.messages(field, name) } catch let error as ModelFormatError {
            throw invalid(error.description)
        }
    }

    /// A repeated varint parameter.
    func ints(_ field: Int) throws -> [Int] {
        do { return try params.ints(field) } catch let error as ModelFormatError { throw invalid(error.description) }
    }

    /// A repeated float parameter.
    func floats(_ field: Int) throws -> [Float] {
        do { return try params.floats(field) } catch let error as ModelFormatError { throw invalid(error.description) }
    }

    /// The `count` values of the `WeightParams` in field `field`.
    ///
    /// - Throws: A load error naming the layer when they are missing or do not fit.
    func weights(
        _ field: Int, count: Int, what: String, channelAxis: NeuralNetworkWeights.ChannelAxis = .first
    ) throws -> [Float] {
        do {
            return try NeuralNetworkWeights.floats(
                try params.message(field, "WeightParams"), count: count, what: what, channelAxis: channelAxis)
        } catch let error as OperandError {
            throw invalid(error.message)
        } catch let error as ModelFormatError {
            throw invalid(error.description)
        }
    }

    /// The values of the `WeightParams` in field `field` for a constant of `shape`, sizes the
    /// layer read from the model: throws when one is negative or their product is more than
    /// Tessera allocates for one value (``LoweredFunction/maximumElementCount``), else as
    /// ``weights(_:count:what:channelAxis:)``.
    func weights(
        _ field: Int, shape: [Int], what: String, channelAxis: NeuralNetworkWeights.ChannelAxis = .first
    ) throws -> [Float] {
        guard shape.allSatisfy({ $0 >= 0 }), let count = shape.checkedElementCount,
            count <= LoweredFunction.maximumElementCount
        else {
            throw invalid("\(what) of shape \(shape) has more elements than Tessera allocates for one value")
        }
        return try weights(field, count: count, what: what, channelAxis: channelAxis)
    }

    /// The values of the `WeightParams` in field `field`, however many there are (`nil`
    /// when the field is absent).
    func weightsOfAnyCount(_ field: Int, what: String) throws -> [Float]? {
        do {
            guard let params = try params.message(field, "WeightParams") else { return nil }
            return try NeuralNetworkWeights.floatsOfAnyCount(params, expectedCount: nil, what: what)
        } catch let error as OperandError {
            throw invalid(error.message)
        } catch let error as ModelFormatError {
            throw invalid(error.description)
        }
    }

    /// Registers a Float32 constant as the next operand and returns its position in the
    /// closure's arguments.
    ///
    /// - Precondition: `values.count` is the product of `shape`.
    mutating func constant(_ values: [Float], shape: [Int]) -> Int {
        precondition(
            values.count == shape.reduce(1, *), "[NeuralNetworkLayerLowering] \(values.count) values for \(shape)")
        constants.append(MLTensor.modelConstant(shape: shape, scalars: values))
        return inputCount + constants.count - 1
    }
}

extension MLTensor {
    /// The tensor as `[N, C, H, W]` with every axis before the last three merged into `N`
    /// (rank 3 gets `N = 1`), and the leading shape to restore: how the legacy NeuralNetwork
    /// layers treat `[Seq, Batch, C, H, W]` and the rank-N blobs of spec 4.
    ///
    /// - Throws: ``OperandError`` for a rank below 3.
    func asImageBatch(layer: String) throws -> (MLTensor, leading: [Int]) {
        try require(rank >= 3, "\(layer) needs an input of rank 3 or more ([…, C, H, W]), got \(shape)")
        let leading = Array(shape.dropLast(3))
        let n = leading.reduce(1, *)
        return (reshapedIfNeeded(to: [n] + shape.suffix(3)), leading)
    }

    /// An `[N, C, H, W]` result given back its leading axes.
    func restoringLeading(_ leading: [Int]) -> MLTensor {
        reshapedIfNeeded(to: leading + shape.suffix(3))
    }
}

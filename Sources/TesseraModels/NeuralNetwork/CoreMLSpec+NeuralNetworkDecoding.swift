import TesseraProtobuf

extension CoreMLSpec.NeuralNetwork {
    /// Decodes `NeuralNetwork`, `NeuralNetworkClassifier` or `NeuralNetworkRegressor` (they
    /// share `layers = 1; preprocessing = 2; arrayInputShapeMapping = 5;
    /// imageInputShapeMapping = 6; updateParams = 10`; a classifier adds `stringClassLabels =
    /// 100`, `int64ClassLabels = 101` and `labelProbabilityLayerName = 200`).
    ///
    /// - Throws: ``ModelFormatError`` for a malformed encoding (a truncated layer list among
    ///   them) or an unknown shape mapping.
    init(from reader: inout ProtobufReader, kind: Kind) throws {
        self = try decodingMessage("NeuralNetwork") {
            var network = CoreMLSpec.NeuralNetwork()
            network.kind = kind
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    network.layers.append(try CoreMLSpec.NeuralNetworkLayer(from: &child))
                case 2:
                    var child = try reader.readMessage()
                    network.preprocessing.append(try CoreMLSpec.NeuralNetworkPreprocessing(from: &child))
                case 5:
                    let raw = Int(try reader.readEnum())
                    guard let mapping = ArrayShapeMapping(rawValue: raw) else {
                        throw reader.invalid("unknown arrayInputShapeMapping \(raw)")
                    }
                    network.arrayInputShapeMapping = mapping
                case 6:
                    let raw = Int(try reader.readEnum())
                    guard let mapping = ImageShapeMapping(rawValue: raw) else {
                        throw reader.invalid("unknown imageInputShapeMapping \(raw)")
                    }
                    network.imageInputShapeMapping = mapping
                case 10:
                    network.hasUpdateParameters = true
                    try reader.skipField()
                case 100 where kind == .classifier:
                    var child = try reader.readMessage()
                    var labels: [String] = []
                    while let inner = try child.nextField() {
                        if inner.fieldNumber == 1 {
                            labels.append(try child.readString())
                        } else {
                            try child.skipField()
                        }
                    }
                    network.classLabels = .strings(labels)
                case 101 where kind == .classifier:
                    var child = try reader.readMessage()
                    var labels: [Int64] = []
                    while let inner = try child.nextField() {
                        if inner.fieldNumber == 1 {
                            try child.readRepeatedInt64(into: &labels)
                        } else {
                            try child.skipField()
                        }
                    }
                    network.classLabels = .int64s(labels)
                case 200 where kind == .classifier: network.labelProbabilityLayerName = try reader.readString()
                default: try reader.skipField()
                }
            }
            return network
        }
    }
}

extension CoreMLSpec.NeuralNetworkLayer {
    /// Decodes `NeuralNetworkLayer { name = 1; input = 2; output = 3; inputTensor = 4;
    /// outputTensor = 5; isUpdatable = 10; oneof layer (fields 100…1471) }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("NeuralNetworkLayer") {
            var layer = CoreMLSpec.NeuralNetworkLayer()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: layer.name = try reader.readString()
                case 2: layer.inputs.append(try reader.readString())
                case 3: layer.outputs.append(try reader.readString())
                case 4: layer.inputRanks.append(try Self.readTensor(&reader).rank)
                case 5: layer.outputTensors.append(try Self.readTensor(&reader))
                case 10: layer.isUpdatable = try reader.readBool()
                case let field where field >= 100:
                    // The oneof: the last alternative in the file wins.
                    var child = try reader.readMessage()
                    layer.typeField = field
                    layer.parameters = try decodingMessage(layer.typeName) { try ProtobufFieldTable(from: &child) }
                default: try reader.skipField()
                }
            }
            return layer
        }
    }

    /// Decodes `Tensor { rank = 1; dimValue = 2 }`.
    private static func readTensor(_ reader: inout ProtobufReader) throws -> (rank: Int, dimensions: [Int]) {
        var child = try reader.readMessage()
        var rank = 0
        var dimensions: [Int64] = []
        while let tag = try child.nextField() {
            switch tag.fieldNumber {
            case 1: rank = Int(try child.readUInt32())
            case 2: try child.readRepeatedInt64(into: &dimensions)
            default: try child.skipField()
            }
        }
        return (rank, dimensions.map { Int($0) })
    }
}

extension CoreMLSpec.NeuralNetworkPreprocessing {
    /// Decodes `NeuralNetworkPreprocessing { featureName = 1; oneof { scaler = 10; meanImage = 11 } }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("NeuralNetworkPreprocessing") {
            var preprocessing = CoreMLSpec.NeuralNetworkPreprocessing()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: preprocessing.featureName = try reader.readString()
                case 10:
                    var child = try reader.readMessage()
                    let fields = try ProtobufFieldTable(from: &child)
                    // NeuralNetworkImageScaler: channelScale = 10, blue/green/redBias = 20–22, grayBias = 30.
                    preprocessing.operation = .scaler(
                        channelScale: fields.float(10) ?? 0, blueBias: fields.float(20) ?? 0,
                        greenBias: fields.float(21) ?? 0, redBias: fields.float(22) ?? 0,
                        grayBias: fields.float(30) ?? 0)
                case 11:
                    var child = try reader.readMessage()
                    preprocessing.operation = .meanImage(try ProtobufFieldTable(from: &child).floats(1))
                default: try reader.skipField()
                }
            }
            return preprocessing
        }
    }
}

extension CoreMLSpec.NeuralNetwork {
    /// Decodes the network of `Model` field `field` (303 regressor, 403 classifier, 500 plain).
    init(from reader: inout ProtobufReader, field: Int) throws {
        let kind: Kind = field == 403 ? .classifier : field == 303 ? .regressor : .plain
        try self.init(from: &reader, kind: kind)
    }
}

import Foundation
import TesseraProtobuf

/// The field names of `NeuralNetworkLayer`'s `layer` oneof by field number (from
/// coremltools' `NeuralNetwork.proto`), which Core ML reports as a layer's `type`.
enum NeuralNetworkLayerTypes {
    /// Field number → layer type name.
    static let names: [Int: String] = [
        100: "convolution", 120: "pooling", 130: "activation", 140: "innerProduct", 150: "embedding",
        160: "batchnorm", 165: "mvn", 170: "l2normalize", 175: "softmax", 180: "lrn", 190: "crop", 200: "padding",
        210: "upsample", 211: "resizeBilinear", 212: "cropResize", 220: "unary", 230: "add", 231: "multiply",
        240: "average", 245: "scale", 250: "bias", 260: "max", 261: "min", 270: "dot", 280: "reduce",
        290: "loadConstant", 300: "reshape", 301: "flatten", 310: "permute", 320: "concat", 330: "split",
        340: "sequenceRepeat", 345: "reorganizeData", 350: "slice", 400: "simpleRecurrent", 410: "gru",
        420: "uniDirectionalLSTM", 430: "biDirectionalLSTM", 500: "custom", 600: "copy", 605: "branch", 615: "loop",
        620: "loopBreak", 625: "loopContinue", 635: "rangeStatic", 640: "rangeDynamic", 660: "clip", 665: "ceil",
        670: "floor", 680: "sign", 685: "round", 700: "exp2", 710: "sin", 715: "cos", 720: "tan", 730: "asin",
        735: "acos", 740: "atan", 750: "sinh", 755: "cosh", 760: "tanh", 770: "asinh", 775: "acosh", 780: "atanh",
        790: "erf", 795: "gelu", 815: "equal", 820: "notEqual", 825: "lessThan", 827: "lessEqual",
        830: "greaterThan", 832: "greaterEqual", 840: "logicalOr", 845: "logicalXor", 850: "logicalNot",
        855: "logicalAnd", 865: "modBroadcastable", 870: "minBroadcastable", 875: "maxBroadcastable",
        880: "addBroadcastable", 885: "powBroadcastable", 890: "divideBroadcastable", 895: "floorDivBroadcastable",
        900: "multiplyBroadcastable", 905: "subtractBroadcastable", 920: "tile", 925: "stack", 930: "gather",
        935: "scatter", 940: "gatherND", 945: "scatterND", 950: "softmaxND", 952: "gatherAlongAxis",
        954: "scatterAlongAxis", 960: "reverse", 965: "reverseSeq", 975: "splitND", 980: "concatND",
        985: "transpose", 995: "sliceStatic", 1000: "sliceDynamic", 1005: "slidingWindows", 1015: "topK",
        1020: "argMin", 1025: "argMax", 1040: "embeddingND", 1045: "batchedMatmul", 1065: "getShape",
        1070: "loadConstantND", 1080: "fillLike", 1085: "fillStatic", 1090: "fillDynamic", 1100: "broadcastToLike",
        1105: "broadcastToStatic", 1110: "broadcastToDynamic", 1120: "squeeze", 1125: "expandDims",
        1130: "flattenTo2D", 1135: "reshapeLike", 1140: "reshapeStatic", 1145: "reshapeDynamic",
        1150: "rankPreservingReshape", 1155: "constantPad", 1170: "randomNormalLike", 1175: "randomNormalStatic",
        1180: "randomNormalDynamic", 1190: "randomUniformLike", 1195: "randomUniformStatic",
        1200: "randomUniformDynamic", 1210: "randomBernoulliLike", 1215: "randomBernoulliStatic",
        1220: "randomBernoulliDynamic", 1230: "categoricalDistribution", 1250: "reduceL1", 1255: "reduceL2",
        1260: "reduceMax", 1265: "reduceMin", 1270: "reduceSum", 1275: "reduceProd", 1280: "reduceMean",
        1285: "reduceLogSum", 1290: "reduceSumSquare", 1295: "reduceLogSumExp", 1313: "whereNonZero",
        1315: "matrixBandPart", 1320: "lowerTriangular", 1325: "upperTriangular", 1330: "whereBroadcastable",
        1350: "layerNormalization", 1400: "NonMaximumSuppression", 1450: "oneHot", 1455: "cumSum",
        1460: "clampedReLU", 1461: "argSort", 1465: "pooling3d", 1466: "globalPooling3d", 1470: "sliceBySize",
        1471: "convolution3d",
    ]
}

extension MLModelStructure {
    /// Decodes the structure of a non-program specification: a neural network's layers or a
    /// pipeline's sub-models (whose ML programs get operations, numbered by `numbering`).
    static func decodeSpecification(
        _ data: [UInt8], file: String, numbering: inout StructureNumbering
    ) throws -> MLModelStructure {
        try data.withUnsafeBytes { buffer in
            try decodeModel(buffer, file: file, numbering: &numbering)
        }
    }

    /// Decodes one `Model` message from its bytes.
    private static func decodeModel(
        _ bytes: UnsafeRawBufferPointer, file: String, numbering: inout StructureNumbering
    ) throws -> MLModelStructure {
        var reader = ProtobufReader(bytes, maxDepth: 64)
        var result = MLModelStructure.unsupported
        while let tag = try reader.nextField() {
            switch tag.fieldNumber {
            case 303, 403, 500:  // neuralNetworkRegressor, neuralNetworkClassifier, neuralNetwork
                var network = try reader.readMessage()
                result = .neuralNetwork(try decodeNeuralNetwork(&network, numbering: &numbering))
            case 200, 201:  // pipelineClassifier, pipelineRegressor: { Pipeline pipeline = 1 }
                var wrapper = try reader.readMessage()
                while let inner = try wrapper.nextField() {
                    if inner.fieldNumber == 1 {
                        var pipeline = try wrapper.readMessage()
                        result = .pipeline(try decodePipeline(&pipeline, file: file, numbering: &numbering))
                    } else {
                        try wrapper.skipField()
                    }
                }
            case 202:
                var pipeline = try reader.readMessage()
                result = .pipeline(try decodePipeline(&pipeline, file: file, numbering: &numbering))
            case 502:  // mlProgram: decode the whole model the usual way
                let model = try CoreMLSpec.Model(decoding: Data(bytes), file: file)
                if let program = model.mlProgram {
                    result = .program(Program(program, numbering: &numbering))
                }
                try reader.skipField()
            default:
                try reader.skipField()
            }
        }
        return result
    }

    /// Decodes `NeuralNetwork` (and the classifier/regressor variants): `layers = 1`.
    private static func decodeNeuralNetwork(
        _ reader: inout ProtobufReader, numbering: inout StructureNumbering
    ) throws -> NeuralNetwork {
        var layers: [NeuralNetwork.Layer] = []
        while let tag = try reader.nextField() {
            guard tag.fieldNumber == 1 else {
                try reader.skipField()
                continue
            }
            var layer = try reader.readMessage()
            var name = ""
            var type = "unknown"
            var inputs: [String] = []
            var outputs: [String] = []
            while let field = try layer.nextField() {
                switch field.fieldNumber {
                case 1: name = try layer.readString()
                case 2: inputs.append(try layer.readString())
                case 3: outputs.append(try layer.readString())
                case let number where number >= 100:
                    type = NeuralNetworkLayerTypes.names[number] ?? "layer field \(number)"
                    try layer.skipField()
                default: try layer.skipField()
                }
            }
            layers.append(
                NeuralNetwork.Layer(
                    name: name, type: type, inputNames: inputs, outputNames: outputs, key: numbering.next()))
        }
        return NeuralNetwork(layers: layers)
    }

    /// Decodes `Pipeline`: `models = 1`, `names = 2`.
    private static func decodePipeline(
        _ reader: inout ProtobufReader, file: String, numbering: inout StructureNumbering
    ) throws -> Pipeline {
        var models: [MLModelStructure] = []
        var names: [String] = []
        while let tag = try reader.nextField() {
            switch tag.fieldNumber {
            case 1:
                models.append(try decodeModel(try reader.readBytesView(), file: file, numbering: &numbering))
            case 2: names.append(try reader.readString())
            default: try reader.skipField()
            }
        }
        while names.count < models.count { names.append("") }
        return Pipeline(subModelNames: names, subModels: models)
    }
}

import TesseraProtobuf

extension CoreMLSpec {
    /// `TreeEnsembleRegressor` / `TreeEnsembleClassifier`: the nodes of every tree, the base
    /// prediction, the transform, and (for a classifier) the labels.
    package struct TreeEnsemble: Sendable, Equatable {
        /// One node of one tree (`TreeEnsembleParameters.TreeNode`).
        package struct Node: Sendable, Equatable {
            package var treeId: UInt64 = 0
            package var nodeId: UInt64 = 0
            /// `TreeNodeBehavior`: 0 `<=`, 1 `<`, 2 `>=`, 3 `>`, 4 `==`, 5 `!=`, 6 leaf.
            package var behavior: Int32 = 0
            package var featureIndex: UInt64 = 0
            package var threshold: Double = 0
            package var trueChild: UInt64 = 0
            package var falseChild: UInt64 = 0
            package var missingTracksTrue = false
            /// A leaf's contributions: (output dimension, value).
            package var values: [(index: UInt64, value: Double)] = []

            package static func == (lhs: Node, rhs: Node) -> Bool {
                lhs.treeId == rhs.treeId && lhs.nodeId == rhs.nodeId && lhs.behavior == rhs.behavior
                    && lhs.featureIndex == rhs.featureIndex && lhs.threshold == rhs.threshold
                    && lhs.trueChild == rhs.trueChild && lhs.falseChild == rhs.falseChild
                    && lhs.missingTracksTrue == rhs.missingTracksTrue
                    && lhs.values.map(\.index) == rhs.values.map(\.index)
                    && lhs.values.map(\.value) == rhs.values.map(\.value)
            }
        }

        package var nodes: [Node] = []
        package var dimensions: UInt64 = 0
        package var basePrediction: [Double] = []
        /// `TreeEnsemblePostEvaluationTransform`: 0 none, 1 softmax, 2 logistic, 3 softmax with a
        /// zero reference class.
        package var transform: Int32 = 0
        /// Whether the model is `TreeEnsembleClassifier`.
        package var isClassifier = false
        /// A classifier's labels.
        package var labels: ClassLabels?

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `TreeEnsemble{Regressor,Classifier} { treeEnsemble = 1;
        /// postEvaluationTransform = 2; stringClassLabels = 100; int64ClassLabels = 101 }`.
        init(from reader: inout ProtobufReader, classifier: Bool) throws {
            self = try decodingMessage(classifier ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor") {
                var model = TreeEnsemble()
                model.isClassifier = classifier
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1:
                        var parameters = try reader.readMessage()
                        try model.decodeParameters(&parameters)
                    case 2: model.transform = try reader.readEnum()
                    case 100 where classifier, 101 where classifier:
                        model.labels = try reader.readClassLabels(tag.fieldNumber)
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }

        /// Decodes `TreeEnsembleParameters { nodes = 1; numPredictionDimensions = 2;
        /// basePredictionValue = 3 }`.
        private mutating func decodeParameters(_ reader: inout ProtobufReader) throws {
            try decodingMessage("TreeEnsembleParameters") {
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1:
                        var child = try reader.readMessage()
                        nodes.append(try Node(from: &child))
                    case 2: dimensions = try reader.readUInt64()
                    case 3: try reader.readRepeatedDouble(into: &basePrediction)
                    default: try reader.skipField()
                    }
                }
            }
        }
    }
}

extension CoreMLSpec.TreeEnsemble.Node {
    /// Decodes `TreeNode { treeId = 1; nodeId = 2; nodeBehavior = 3; branchFeatureIndex = 10;
    /// branchFeatureValue = 11; trueChildNodeId = 12; falseChildNodeId = 13;
    /// missingValueTracksTrueChild = 14; evaluationInfo = 20 { evaluationIndex = 1;
    /// evaluationValue = 2 } }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("TreeNode") {
            var node = Self()
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: node.treeId = try reader.readUInt64()
                case 2: node.nodeId = try reader.readUInt64()
                case 3: node.behavior = try reader.readEnum()
                case 10: node.featureIndex = try reader.readUInt64()
                case 11: node.threshold = try reader.readDouble()
                case 12: node.trueChild = try reader.readUInt64()
                case 13: node.falseChild = try reader.readUInt64()
                case 14: node.missingTracksTrue = try reader.readBool()
                case 20:
                    var info = try reader.readMessage()
                    var entry: (index: UInt64, value: Double) = (0, 0)
                    while let field = try info.nextField() {
                        switch field.fieldNumber {
                        case 1: entry.index = try info.readUInt64()
                        case 2: entry.value = try info.readDouble()
                        default: try info.skipField()
                        }
                    }
                    node.values.append(entry)
                default: try reader.skipField()
                }
            }
            return node
        }
    }
}

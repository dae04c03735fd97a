import TesseraProtobuf

extension CoreMLSpec {
    /// `Pipeline { repeated Model models = 1; repeated string names = 2 }`, and which of the
    /// three pipeline model types holds it.
    package struct Pipeline: Sendable, Equatable {
        /// `pipeline`, `pipelineClassifier` or `pipelineRegressor`.
        package enum Kind: Sendable, Equatable {
            case plain, classifier, regressor
        }

        package var kind: Kind
        /// The stages, run in order; each reads features named in its own description.
        package var models: [Model] = []
        package var names: [String] = []

        /// Decodes a `Pipeline` message.
        init(from reader: inout ProtobufReader, kind: Kind) throws {
            self.kind = kind
            try decodingMessage("Pipeline") {
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1:
                        var child = try reader.readMessage()
                        models.append(try Model(from: &child))
                    case 2: names.append(try reader.readString())
                    default: try reader.skipField()
                    }
                }
            }
        }

        /// Decodes `PipelineClassifier` / `PipelineRegressor { Pipeline pipeline = 1 }`.
        init(wrappedIn reader: inout ProtobufReader, kind: Kind) throws {
            var pipeline: Pipeline?
            try decodingMessage(kind == .classifier ? "PipelineClassifier" : "PipelineRegressor") {
                while let tag = try reader.nextField() {
                    if tag.fieldNumber == 1 {
                        var child = try reader.readMessage()
                        pipeline = try Pipeline(from: &child, kind: kind)
                    } else {
                        try reader.skipField()
                    }
                }
            }
            self = pipeline ?? Pipeline(kind: kind)
        }

        private init(kind: Kind) { self.kind = kind }
    }

    /// `NonMaximumSuppression`: the thresholds, per-class or class-agnostic suppression, and
    /// the names of the features it reads and writes.
    package struct NonMaximumSuppression: Sendable, Equatable {
        package var perClass = false
        package var labels: ClassLabels?
        package var iouThreshold: Double = 0
        package var confidenceThreshold: Double = 0
        package var confidenceInput = ""
        package var coordinatesInput = ""
        package var iouThresholdInput = ""
        package var confidenceThresholdInput = ""
        package var confidenceOutput = ""
        package var coordinatesOutput = ""

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `NonMaximumSuppression { pickTop = 1 { perClass = 1 }; stringClassLabels =
        /// 100; int64ClassLabels = 101; iouThreshold = 110; confidenceThreshold = 111;
        /// confidenceInputFeatureName = 200; coordinatesInputFeatureName = 201;
        /// iouThresholdInputFeatureName = 202; confidenceThresholdInputFeatureName = 203;
        /// confidenceOutputFeatureName = 210; coordinatesOutputFeatureName = 211 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("NonMaximumSuppression") {
                var model = NonMaximumSuppression()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1:
                        var pick = try reader.readMessage()
                        while let field = try pick.nextField() {
                            if field.fieldNumber == 1 {
                                model.perClass = try pick.readBool()
                            } else {
                                try pick.skipField()
                            }
                        }
                    case 100, 101: model.labels = try reader.readClassLabels(tag.fieldNumber)
                    case 110: model.iouThreshold = try reader.readDouble()
                    case 111: model.confidenceThreshold = try reader.readDouble()
                    case 200: model.confidenceInput = try reader.readString()
                    case 201: model.coordinatesInput = try reader.readString()
                    case 202: model.iouThresholdInput = try reader.readString()
                    case 203: model.confidenceThresholdInput = try reader.readString()
                    case 210: model.confidenceOutput = try reader.readString()
                    case 211: model.coordinatesOutput = try reader.readString()
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }
}

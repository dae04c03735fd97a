import TesseraProtobuf

extension CoreMLSpec {
    /// `GLMRegressor`: `y_j = Σ_i weights[j][i]·x_i + offset[j]`, then the transform.
    package struct GLMRegressor: Sendable, Equatable {
        /// One weight vector per output dimension.
        package var weights: [[Double]] = []
        /// One offset per output dimension.
        package var offsets: [Double] = []
        /// `PostEvaluationTransform`: 0 none, 1 logit, 2 probit.
        package var transform: Int32 = 0

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `GLMRegressor { weights = 1; offset = 2; postEvaluationTransform = 3 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("GLMRegressor") {
                var model = GLMRegressor()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: model.weights.append(try reader.readDoubles("DoubleArray"))
                    case 2: try reader.readRepeatedDouble(into: &model.offsets)
                    case 3: model.transform = try reader.readEnum()
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }

    /// `GLMClassifier`: one linear function per class (one-vs-rest) or a single one for two
    /// classes, then a logit or probit transform.
    package struct GLMClassifier: Sendable, Equatable {
        /// One weight vector per linear function.
        package var weights: [[Double]] = []
        /// One offset per linear function.
        package var offsets: [Double] = []
        /// `PostEvaluationTransform`: 0 logit, 1 probit.
        package var transform: Int32 = 0
        /// `ClassEncoding`: 0 reference class, 1 one-vs-rest.
        package var classEncoding: Int32 = 0
        /// The class labels.
        package var labels: ClassLabels = .strings([])

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `GLMClassifier { weights = 1; offset = 2; postEvaluationTransform = 3;
        /// classEncoding = 4; stringClassLabels = 100; int64ClassLabels = 101 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("GLMClassifier") {
                var model = GLMClassifier()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: model.weights.append(try reader.readDoubles("DoubleArray"))
                    case 2: try reader.readRepeatedDouble(into: &model.offsets)
                    case 3: model.transform = try reader.readEnum()
                    case 4: model.classEncoding = try reader.readEnum()
                    case 100, 101: model.labels = try reader.readClassLabels(tag.fieldNumber)
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }
}

extension CoreMLSpec.Classic {
    /// Lines describing the model's structure for `tessera describe`: its kind and sizes, a
    /// pipeline's stages indented under it.
    ///
    /// ```
    /// pipelineRegressor of 2 models
    ///   1. pipeline of 7 models
    ///   …
    ///   2. glmRegressor: 1 output, 12 weights per output
    /// ```
    package func summary(type: CoreMLSpec.ModelType?, indent: String = "") -> [String] {
        let name = type.map { "\($0)" } ?? "model"
        switch self {
        case .pipeline(let pipeline):
            var lines = ["\(indent)\(name) of \(pipeline.models.count) models"]
            for (index, model) in pipeline.models.enumerated() {
                let stage = model.type.map { "\($0)" } ?? "no model type"
                if let classic = model.classic {
                    var nested = classic.summary(type: model.type, indent: indent + "  ")
                    nested[0] = "\(indent)  \(index + 1). " + nested[0].drop(while: { $0 == " " })
                    lines += nested
                } else {
                    lines.append("\(indent)  \(index + 1). \(stage)")
                }
            }
            return lines
        case .treeEnsemble(let trees):
            let count = Set(trees.nodes.map(\.treeId)).count
            return [
                "\(indent)\(name): \(count) trees, \(trees.nodes.count) nodes, \(max(trees.dimensions, 1)) "
                    + "prediction dimensions, transform \(trees.transform)"
            ]
        case .glmRegressor(let model):
            return ["\(indent)\(name): \(model.weights.count) outputs, \(model.weights.first?.count ?? 0) weights each"]
        case .glmClassifier(let model):
            return ["\(indent)\(name): \(model.weights.count) weight vectors of \(model.weights.first?.count ?? 0)"]
        case .supportVectorClassifier(let model):
            return ["\(indent)\(name): \(model.supportVectors.count) support vectors, kernel \(model.kernel)"]
        case .supportVectorRegressor(let model):
            return ["\(indent)\(name): \(model.supportVectors.count) support vectors, kernel \(model.kernel)"]
        case .kNearestNeighborsClassifier(let model):
            return ["\(indent)\(name): \(model.samples.count) samples of \(model.dimensions), k = \(model.k)"]
        case .oneHotEncoder(let model): return ["\(indent)\(name): \(model.categories.count) categories"]
        case .dictVectorizer(let keys): return ["\(indent)\(name): \(keys.count) keys"]
        case .featureVectorizer(let columns):
            return ["\(indent)\(name): " + columns.map { "\($0.name)[\($0.dimensions)]" }.joined(separator: " + ")]
        default: return ["\(indent)\(name)"]
        }
    }
}

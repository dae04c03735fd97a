import Foundation

/// `pipeline`, `pipelineClassifier` and `pipelineRegressor`: stages run in order, each
/// reading the features its description names from the pipeline's inputs and the earlier
/// stages' outputs; the pipeline returns the features its own description lists.
///
/// Stages are models of their own (classic models, nested pipelines, ML programs), built by
/// ``ClassicModelFactory/stage(_:index:of:name:snapshot:)``. A batch runs stage by stage,
/// each stage over every row at once, so a tree ensemble or linear model at the end
/// evaluates the batch in one pass.
struct PipelineModel: ClassicModel {
    let interface: ClassicInterface
    let stages: [MLModel]
    let names: [String]

    init(
        _ spec: CoreMLSpec.Pipeline, _ interface: ClassicInterface, package: CoreMLPackage, name: String,
        snapshot: MLModelConfiguration.Snapshot
    ) throws {
        self.interface = interface
        guard !spec.models.isEmpty else {
            throw interface.invalid("the pipeline has no models", file: package.modelDisplayName)
        }
        stages = try spec.models.enumerated().map { index, model in
            try ClassicModelFactory.stage(model, index: index, of: package, name: name, snapshot: snapshot)
        }
        names = spec.names
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        let features = PipelineRow(base: row)
        for (index, stage) in stages.enumerated() {
            let output = try stageError(index) { try stage.prediction(from: features) }
            for name in output.featureNames { features.added[name] = output.featureValue(for: name) }
        }
        return try result(features)
    }

    func predict(batch rows: [any MLFeatureProvider]) throws -> [[String: MLFeatureValue]] {
        let features = rows.map { PipelineRow(base: $0) }
        for (index, stage) in stages.enumerated() {
            let outputs = try stageError(index) { try stage.batchOutputs(MLArrayBatchProvider(array: features)) }
            for (row, output) in zip(features, outputs) {
                for name in output.featureNames { row.added[name] = output.featureValue(for: name) }
            }
        }
        return try features.enumerated().map { index, row in try ClassicBatch.item(index) { try result(row) } }
    }

    /// The pipeline's declared outputs from a row's features.
    private func result(_ row: PipelineRow) throws -> [String: MLFeatureValue] {
        var outputs: [String: MLFeatureValue] = [:]
        for output in interface.outputs {
            guard let value = row.featureValue(for: output.name) else {
                throw MLModelError(
                    .generic, "\(interface.part): no stage produced the pipeline's output \"\(output.name)\"")
            }
            outputs[output.name] = value
        }
        return outputs
    }

    /// Runs `body` for stage `index`, naming the stage in its error.
    private func stageError<T>(_ index: Int, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as MLModelError {
            let stage = index < names.count && !names[index].isEmpty ? "\"\(names[index])\"" : "\(index)"
            throw MLModelError(error.code, "pipeline stage \(stage): \(error.message)", underlyingError: error)
        }
    }
}

/// A row flowing through a pipeline: the caller's features plus what earlier stages added.
final class PipelineRow: MLFeatureProvider {
    let base: any MLFeatureProvider
    var added: [String: MLFeatureValue] = [:]

    init(base: any MLFeatureProvider) { self.base = base }

    var featureNames: Set<String> { base.featureNames.union(added.keys) }

    func featureValue(for featureName: String) -> MLFeatureValue? {
        added[featureName] ?? base.featureValue(for: featureName)
    }
}

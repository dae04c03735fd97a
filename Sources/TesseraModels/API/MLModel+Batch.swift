import Foundation
import TesseraMultiArray
import TesseraTensor

extension MLModel {
    /// **Tessera extension**: the number of batches this model ran as one execution rather
    /// than as a loop of single predictions (see ``predictions(fromBatch:)``).
    package var batchedExecutionCount: Int { classicModel == nil ? function.batchedExecutionCount : 0 }

    /// Predicts every item of a batch: validates them all first, then runs them as one
    /// execution when the model allows it, else as a loop of single predictions.
    ///
    /// - Throws: ``MLModelError`` whose message starts with "batch input N:".
    func batchOutputs(_ batch: any MLBatchProvider) throws -> [any MLFeatureProvider] {
        if let classic = classicModel { return try classicBatchOutputs(classic, batch) }
        var items: [[String: MLTensor]] = []
        items.reserveCapacity(batch.count)
        for index in 0..<batch.count {
            do {
                items.append(try boundInputs(batch.features(at: index)))
            } catch let error as MLModelError {
                throw Self.batchError(error, index: index)
            }
        }
        if let pending = batchedPendingOutputs(items) {
            try materializeWithinMemoryLimit(pending.flatMap(\.tensors))
            return try pending.enumerated().map { index, outputs in
                do {
                    return try outputs.provider()
                } catch let error as MLModelError {
                    throw Self.batchError(error, index: index)
                }
            }
        }
        return try items.enumerated().map { index, inputs in
            do {
                let pending = try pendingOutputs(runProgram(inputs))
                try materializeWithinMemoryLimit(pending.tensors)
                return try pending.provider()
            } catch let error as MLModelError {
                throw Self.batchError(error, index: index)
            }
        }
    }

    /// An item's error with its index in front.
    private static func batchError(_ error: MLModelError, index: Int) -> MLModelError {
        MLModelError(error.code, "batch input \(index): \(error.message)", underlyingError: error)
    }

    /// Each item's outputs from one execution of the whole batch, lazy, or `nil` when the
    /// batch must run as a loop.
    ///
    /// One execution needs: two items or more; a stateless model that is not a classifier
    /// and whose outputs are all multi-arrays; for every input, the same shape (rank ≥ 1) in
    /// every item, and the items concatenated along axis 0 allowed by both the program's input
    /// type (dimension 0 not fixed) and the description (a size range or an enumerated shape
    /// that contains the concatenated shape); and the program proven batch-separable for
    /// these shapes (``LoweredFunction/runBatch(_:firstItem:count:)``).
    func batchedPendingOutputs(_ items: [[String: MLTensor]]) -> [PendingOutputs]? {
        let count = items.count
        guard count >= 2, stateBindings.isEmpty, function.classifier == nil, modelDescription.labels == nil,
            modelDescription.outputDescriptionsByName.values.allSatisfy({ $0.type == .multiArray })
        else { return nil }
        var stacked: [String: MLTensor] = [:]
        for binding in bindings {
            let tensors = items.compactMap { $0[binding.name] }
            guard tensors.count == count, let shape = tensors.first?.shape, !shape.isEmpty,
                tensors.allSatisfy({ $0.shape == shape })
            else { return nil }
            var stackedShape = shape
            stackedShape[0] *= count
            guard binding.allowsBatch(stackedShape) else { return nil }
            stacked[binding.name] = MLTensor(concatenating: tensors, alongAxis: 0)
        }
        guard let results = function.runBatch(stacked, firstItem: items[0], count: count) else { return nil }
        var perItem = [[String: MLTensor]](repeating: [:], count: count)
        for (name, tensor) in results {
            guard tensor.rank >= 1, tensor.shape[0] % count == 0 else { return nil }
            for (index, part) in tensor.split(count: count, alongAxis: 0).enumerated() { perItem[index][name] = part }
        }
        return try? perItem.map(pendingOutputs)
    }
}

extension InputBinding {
    /// Whether a batch may run with this input concatenated to `shape`: the program leaves
    /// dimension 0 open and the description's size range or enumerated shapes allow `shape`.
    /// A fixed shape (an `.unspecified` constraint) never does.
    func allowsBatch(_ shape: [Int]) -> Bool {
        if tensorType.rank >= 0 {
            guard case .unknown? = tensorType.dimensions.first else { return false }
        }
        guard let constraint = description.multiArrayConstraint,
            constraint.shapeConstraint.type == .range || constraint.shapeConstraint.type == .enumerated
        else { return false }
        return MLFeatureDescription.shapeProblem(shape, constraint) == nil
    }
}

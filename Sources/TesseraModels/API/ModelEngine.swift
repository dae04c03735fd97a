import Foundation

/// What a loaded ``MLModel`` runs: the one place that says which kinds of model exist.
///
/// - ``program(_:)``: an ML program (or a NeuralNetwork lowered to the same form), run as a
///   tensor graph through ``LoweredFunction``; the program paths of `MLModel` (bindings,
///   states, batching by concatenation) apply.
/// - ``classic(_:)``: a classic model (linear model, SVM, tree ensemble, k-NN, feature
///   engineering, pipeline), evaluated directly on feature values by a ``ClassicModel``.
///
/// `MLModel`'s prediction entry points look at the engine once and hand a classic model's
/// providers straight to it; the program path is unchanged.
enum ModelEngine: Sendable {
    /// A lowered ML program.
    case program(LoweredFunction)
    /// A classic model.
    case classic(any ClassicModel)
}

extension MLModel {
    /// The lowered program of a program model.
    ///
    /// Only the program paths read it; every prediction entry point routes a classic model
    /// elsewhere first (``classicModel``), so reaching this for one is a Tessera bug.
    var function: LoweredFunction {
        guard case .program(let function) = engine else {
            preconditionFailure("[MLModel] the program path ran for a classic model (\(modelDescription.inputOrder))")
        }
        return function
    }

    /// The classic model this model runs, or `nil` for a program.
    var classicModel: (any ClassicModel)? {
        if case .classic(let model) = engine { return model }
        return nil
    }

    /// One classic prediction as an output provider.
    func classicPrediction(_ model: any ClassicModel, from input: any MLFeatureProvider) throws
        -> MLDictionaryFeatureProvider
    {
        MLDictionaryFeatureProvider(features: try model.predict(input))
    }
}

import Foundation

/// The structure of a model — its ML program's functions and operations, a neural network's
/// layers, or a pipeline's sub-models: Core ML's `MLModelStructure`.
///
/// Read it from a compute plan (``MLComputePlan/modelStructure``) to ask about each
/// operation, or load it alone with ``load(contentsOf:)``:
///
/// ```swift
/// let structure = try await MLModelStructure.load(contentsOf: compiledURL)
/// guard case let .program(program) = structure, let main = program.functions["main"] else { return }
/// for operation in main.block.operations {
///     print(operation.operatorName, operation.outputs.map(\.name))
/// }
/// ```
public enum MLModelStructure: Sendable {
    /// A neural-network model (the older `.mlmodel` layer format).
    case neuralNetwork(MLModelStructure.NeuralNetwork)
    /// A pipeline of models run one after another.
    case pipeline(MLModelStructure.Pipeline)
    /// An ML program: functions made of operations.
    case program(MLModelStructure.Program)
    /// Any other model type (tree ensembles, GLMs, feature engineering models, …).
    case unsupported

    /// Reads the structure of a model without preparing it for prediction.
    ///
    /// `url` is a directory made by `MLModel.compileModel(at:)` or (**Tessera extension**)
    /// an `.mlpackage` or `.mlmodel`.
    ///
    /// - Throws: ``MLModelError`` `.io` when the model is missing, truncated or corrupted.
    public static func load(contentsOf url: URL) async throws -> MLModelStructure {
        try await runOffPool { try ModelStructureBuilder(url: url).structure }
    }
}

extension MLModelStructure {
    /// A neural network's layers, in order.
    public struct NeuralNetwork: Sendable {
        /// The layers, in execution order.
        public let layers: [Layer]

        /// One layer of a neural network.
        public struct Layer: Sendable {
            /// The layer's name.
            public let name: String
            /// The layer's kind, as the specification's field name (`convolution`,
            /// `innerProduct`, `activation`, …).
            public let type: String
            /// The names of the values the layer reads.
            public let inputNames: [String]
            /// The names of the values the layer writes.
            public let outputNames: [String]
            /// Identifies the layer within its plan.
            let key: StructureKey
        }
    }

    /// A pipeline: models whose outputs feed the next model's inputs.
    public struct Pipeline: Sendable {
        /// The names of the sub-models (empty strings where the file names none).
        public let subModelNames: [String]
        /// The sub-models' structures, in order.
        public let subModels: [MLModelStructure]
    }
}

/// Identifies an operation or layer inside one loaded structure, so a compute plan can
/// answer for values it handed out and refuse ones from another plan.
struct StructureKey: Sendable, Hashable {
    /// The structure this element belongs to (unique per load).
    var structure: Int
    /// The element's position in a depth-first walk of the structure.
    var index: Int
}

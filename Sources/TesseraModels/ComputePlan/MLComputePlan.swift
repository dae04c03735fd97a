import Foundation

/// Where each operation of a model runs and what it costs: Core ML's `MLComputePlan`.
///
/// Tessera runs everything on the CPU, so every operation's preferred and only supported
/// device is ``MLComputeDevice/cpu(_:)``. The cost of an ML program operation is its share
/// of the function's estimated time, computed from the shapes and types in the program:
/// FLOPs for convolutions, matrix products and attention, element counts for element-wise
/// work and reductions, and the bytes of every tensor read and written (see
/// `estimatedCost(of:)`).
///
/// ```swift
/// let plan = try await MLComputePlan.load(contentsOf: compiledURL, configuration: MLModelConfiguration())
/// guard case let .program(program) = plan.modelStructure, let main = program.functions["main"] else { return }
/// for operation in main.block.operations {
///     let device = plan.deviceUsage(for: operation)?.preferred
///     let weight = plan.estimatedCost(of: operation)?.weight ?? 0
///     print(operation.operatorName, device.map(String.init(describing:)) ?? "-", weight)
/// }
/// ```
public final class MLComputePlan: Sendable {
    /// The structure of the model the plan describes.
    public let modelStructure: MLModelStructure
    /// Keys, costs and constants of the structure's operations and layers.
    let numbering: StructureNumbering

    /// Builds the plan for an already-loaded structure.
    init(modelStructure: MLModelStructure, numbering: StructureNumbering) {
        self.modelStructure = modelStructure
        self.numbering = numbering
    }

    /// Loads the compute plan of a model.
    ///
    /// `url` is a directory made by `MLModel.compileModel(at:)` or (**Tessera extension**)
    /// an `.mlpackage` or `.mlmodel`. The plan covers every function of a multi-function
    /// program; `configuration` is accepted for compatibility (Tessera's plan is the same
    /// for every compute-unit setting).
    ///
    /// - Throws: ``MLModelError`` `.io` when the model is missing, truncated or corrupted.
    public nonisolated(nonsending) static func load(
        contentsOf url: URL, configuration: MLModelConfiguration
    ) async throws -> MLComputePlan {
        try await runOffPool {
            let builder = try ModelStructureBuilder(url: url)
            return MLComputePlan(modelStructure: builder.structure, numbering: builder.numbering)
        }
    }

    /// The devices an ML program operation may run on and the one it will, or `nil` for an
    /// operation of another plan or a `const` (a constant exists before any prediction and
    /// runs nowhere).
    ///
    /// ```swift
    /// if case .cpu = plan.deviceUsage(for: operation)?.preferred { … }
    /// ```
    public func deviceUsage(for operation: MLModelStructure.Program.Operation) -> DeviceUsage? {
        guard numbering.contains(operation.key), operation.operatorName != "const" else { return nil }
        return .cpuOnly
    }

    /// The devices a neural-network layer may run on and the one it will, or `nil` for a
    /// layer of another plan.
    public func deviceUsage(for layer: MLModelStructure.NeuralNetwork.Layer) -> DeviceUsage? {
        numbering.contains(layer.key) ? .cpuOnly : nil
    }

    /// The estimated relative cost of an ML program operation, or `nil` for an operation of
    /// another plan.
    ///
    /// The weights of a function's operations sum to 1. Each is the operation's estimated
    /// time on a reference CPU — FLOPs at 50 GFLOP/s plus bytes read and written at 10 GB/s —
    /// divided by the function's total. Constants (`const`, `constexpr_*`, resolved at load)
    /// weigh 0; dimensions the program leaves unknown count as 1.
    public func estimatedCost(of operation: MLModelStructure.Program.Operation) -> Cost? {
        numbering.costWeights[operation.key].map(Cost.init(weight:))
    }

    /// **Tessera extension**: the estimated relative cost of a neural-network layer, or `nil`
    /// for a layer of another plan or a network whose inputs have no fixed shape.
    ///
    /// The weights of a network's layers sum to 1, estimated as for ML program operations
    /// from the shapes a prediction on inputs of the declared shapes has.
    ///
    /// ```swift
    /// guard case .neuralNetwork(let network) = plan.modelStructure else { return }
    /// let heaviest = network.layers.max { (plan.estimatedCost(of: $0)?.weight ?? 0) < (plan.estimatedCost(of: $1)?.weight ?? 0) }
    /// ```
    public func estimatedCost(of layer: MLModelStructure.NeuralNetwork.Layer) -> Cost? {
        numbering.costWeights[layer.key].map(Cost.init(weight:))
    }
}

extension MLComputePlan {
    /// The compute devices an operation or layer may use.
    public struct DeviceUsage: Sendable {
        /// The device the operation runs on.
        public let preferred: MLComputeDevice
        /// Every device the operation could run on.
        public let supported: [MLComputeDevice]

        /// The Objective-C spelling of ``preferred``; a compatibility extension so code
        /// written against either spelling compiles.
        public var preferredComputeDevice: MLComputeDevice { preferred }

        /// Preferred and supported: the CPU.
        static let cpuOnly = DeviceUsage(
            preferred: .cpu(MLCPUComputeDevice()), supported: [.cpu(MLCPUComputeDevice())])
    }

    /// An operation's estimated cost.
    public struct Cost: Sendable {
        /// The operation's share of its function's estimated time, from 0 to 1.
        public let weight: Double
    }
}

/// Loads a model's structure and numbers it for a compute plan.
struct ModelStructureBuilder {
    /// The structure.
    let structure: MLModelStructure
    /// Its keys and costs.
    let numbering: StructureNumbering

    /// Opens `url` (compiled directory or package) and builds its structure.
    ///
    /// - Throws: ``MLModelError`` `.io` when the model cannot be read.
    init(url: URL) throws {
        let package = try ModelSource.open(url, progress: ProgressReporter(handler: nil))
        try self.init(package: package)
    }

    /// Builds the structure of a parsed package.
    init(package: CoreMLPackage) throws {
        var numbering = StructureNumbering()
        if let program = package.model.mlProgram {
            structure = .program(MLModelStructure.Program(program, numbering: &numbering))
        } else if package.modelURL.lastPathComponent == CompiledModelHeader.fileName {
            structure = try Self.decode(compiledSpecificationOf: package, numbering: &numbering)
        } else {
            do {
                let data = try CoreMLPackage.read(package.modelURL, name: package.modelDisplayName)
                structure = try MLModelStructure.decodeSpecification(
                    [UInt8](data), file: package.modelDisplayName, numbering: &numbering)
            } catch let error as ModelFormatError {
                throw MLModelError(wrapping: error, model: package.url.lastPathComponent)
            }
        }
        if case .neuralNetwork(let network) = structure {
            numbering.assignLayerCosts(network, of: package.model, file: package.modelDisplayName)
        }
        self.numbering = numbering
    }

    /// Decodes the specification section of a compiled model for a non-program model.
    private static func decode(
        compiledSpecificationOf package: CoreMLPackage, numbering: inout StructureNumbering
    ) throws -> MLModelStructure {
        let name = package.url.lastPathComponent
        let file = try MappedFile(package.modelURL, name: name)
        do {
            let header = try CompiledModelHeader(reading: file.bytes)
            return try MLModelStructure.decodeSpecification(
                Array(file.bytes[header.specification.range]), file: CompiledModelHeader.fileName,
                numbering: &numbering)
        } catch let problem as CompiledModelHeader.Problem {
            throw MLModelError(.io, "cannot load \(name): \(CompiledModelReader.message(for: problem))")
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
    }
}

import Foundation
import TesseraMultiArray
import TesseraTensor

/// A Core ML model loaded for prediction: Core ML's `MLModel`, running ML Program models on
/// the CPU.
///
/// Load a model compiled with `compileModel(at:)` (or, as a Tessera extension, an
/// `.mlpackage` or `.mlmodel` directly), then predict from feature providers:
///
/// ```swift
/// let compiled = try await MLModel.compileModel(at: URL(fileURLWithPath: "Digits.mlpackage"))
/// let model = try await MLModel.load(contentsOf: compiled, configuration: MLModelConfiguration())
/// let input = try MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(multiArray: pixels)])
/// let output = try await model.prediction(from: input)
/// print(output.featureValue(for: "classLabel")?.stringValue ?? "?")
/// ```
///
/// ## Threads
///
/// `MLModel` is `Sendable`: a final class whose state is immutable after loading (the
/// description, a copy of the configuration, the lowered program and its weights). Many
/// tasks may predict on one model at once; each prediction builds its own graph and
/// activations and shares only the read-only weights. (Apple documents its models as
/// single-queue objects; Tessera's are safe to share.)
///
/// ## Inputs
///
/// A prediction reads only the inputs the description lists; a provider's extra features
/// are ignored, as Core ML does. A missing input, a value of the wrong type, or a
/// multi-array whose shape the description does not allow throws ``MLModelError`` with code
/// `.featureType` before anything runs. A multi-array of another numeric data type than the
/// model declares is converted.
public final class MLModel: Sendable {
    /// The model's inputs, outputs, metadata and class labels.
    public let modelDescription: MLModelDescription
    /// The configuration the model was loaded with.
    let configurationSnapshot: MLModelConfiguration.Snapshot
    /// What the model runs: its lowered program or a classic model (``ModelEngine``).
    let engine: ModelEngine
    /// What each function input is bound from, in the function's order.
    let bindings: [InputBinding]
    /// The program's states, in the function's order (empty for stateless models).
    let stateBindings: [StateBinding]
    /// The identity the model's states carry (see ``MLState``).
    let stateOwner: StateOwner
    /// The recorded prediction plan predictions replay (see ``PredictionReplay``).
    let replay = PredictionReplay()

    /// Loads a model synchronously with the default configuration.
    ///
    /// ```swift
    /// let model = try MLModel(contentsOf: compiledURL)
    /// ```
    ///
    /// - Throws: ``MLModelError`` (`.io` for a missing or malformed model, `.generic` for an
    ///   unsupported model type or operation).
    public convenience init(contentsOf url: URL) throws {
        try self.init(contentsOf: url, configuration: MLModelConfiguration())
    }

    /// Loads a model synchronously.
    ///
    /// `url` is a directory made by `compileModel(at:)`, or (**Tessera extension**) an
    /// `.mlpackage` directory or `.mlmodel` file, which loads as if compiled first.
    ///
    /// ```swift
    /// let configuration = MLModelConfiguration()
    /// configuration.computeUnits = .cpuOnly
    /// let model = try MLModel(contentsOf: compiledURL, configuration: configuration)
    /// ```
    ///
    /// - Throws: ``MLModelError`` (`.io` for a missing, truncated or corrupted model, `.generic`
    ///   for an unsupported model type or operation).
    public convenience init(contentsOf url: URL, configuration: MLModelConfiguration) throws {
        try self.init(contentsOf: url, configuration: configuration, progress: nil)
    }

    /// **Tessera extension**: loads a model as ``init(contentsOf:configuration:)`` does,
    /// reporting progress (reading, verifying a compiled model's checksums, parsing,
    /// lowering) to `progress`.
    ///
    /// ```swift
    /// let model = try MLModel(contentsOf: compiledURL, configuration: MLModelConfiguration()) { print($0) }
    /// ```
    ///
    /// - Throws: ``MLModelError``, as ``init(contentsOf:configuration:)`` does; `.io` when a
    ///   compiled model is stale, truncated or corrupted, or `configuration.functionName`
    ///   names no function of the program (the message lists the functions there are).
    public convenience init(
        contentsOf url: URL, configuration: MLModelConfiguration, progress: MLModelProgressHandler?
    ) throws {
        let reporter = ProgressReporter(handler: progress)
        // A compiled model's checksum runs on while the program is lowered; the model is
        // ready (and its stored prepared weights registered) only once it passed.
        let corePackage = try ModelSource.open(url, progress: reporter, deferringVerification: true)
        do {
            try self.init(
                package: corePackage, snapshot: configuration.snapshot, name: url.lastPathComponent, reporter: reporter)
        } catch {
            // On a damaged file the failure above is a symptom: report the checksum's error.
            throw corePackage.contentVerification?.intactOrThrow(error) ?? error
        }
    }

    /// Loads a parsed model: what ``init(contentsOf:configuration:progress:)`` does after
    /// reading the files, and how a pipeline builds each of its stages
    /// (``ClassicModelFactory/stage(_:of:name:snapshot:)``). A compiled model's checksum still
    /// running (``CoreMLPackage/contentVerification``) is waited for once the program is
    /// lowered and checked, before its weights are prepared.
    ///
    /// - Throws: ``MLModelError``, as ``init(contentsOf:configuration:)`` does.
    init(
        package corePackage: CoreMLPackage, snapshot: MLModelConfiguration.Snapshot, name: String,
        reporter: ProgressReporter
    ) throws {
        if let classic = try ClassicModelFactory.model(for: corePackage, name: name, snapshot: snapshot) {
            try corePackage.contentVerification?.finish()
            self.modelDescription = classic.description
            self.engine = .classic(classic.model)
            self.bindings = []
            self.stateBindings = []
            self.stateOwner = StateOwner(modelName: name)
            self.configurationSnapshot = snapshot
            reporter.report(.done)
            return
        }
        let program: MILProgram?
        do {
            program =
                corePackage.model.neuralNetwork == nil
                ? try corePackage.model.requireMLProgram(file: corePackage.modelDisplayName) : nil
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
        if let requested = snapshot.functionName, let program, program.functions[requested] == nil {
            let known = program.functions.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            throw MLModelError(
                .io,
                "cannot load \(name): configuration.functionName is \"\(requested)\", but the program has no such "
                    + "function (it has: \(known))")
        }
        let description = try MLModelDescription(corePackage.model, functionName: snapshot.functionName)
        let functionName =
            snapshot.functionName ?? corePackage.model.description.defaultFunctionName.nilIfEmpty ?? "main"
        reporter.report(.lowering)
        let function: LoweredFunction
        do {
            // Constants the lowering makes on the host (ranges, random values) count against the
            // memory limit, as the prediction's do.
            function = try LoweredFunction.withPredictionMemoryLimit(snapshot.memoryLimit) {
                try corePackage.model.neuralNetwork.map {
                    try LoweredFunction(
                        neuralNetwork: $0, description: corePackage.model.description,
                        file: corePackage.modelDisplayName)
                }
                    ?? LoweredFunction(
                        package: corePackage, functionName: functionName,
                        float16Rounding: snapshot.float16Precision == .float16 ? .roundedToFloat16 : .none)
            }
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        } catch let error as MLModelError {
            throw error
        } catch {
            throw MLModelError(.generic, "cannot load \(name): \(error)")
        }
        let bindings = try InputBinding.make(function: function, description: description, model: name)
        let stateBindings = try StateBinding.make(function: function, description: description, model: name)
        let checked = try LoweredFunction.withPredictionMemoryLimit(snapshot.memoryLimit) {
            try MLModel.checkBuildsOnDeclaredShapes(function, inputs: bindings, states: stateBindings, model: name)
        }
        // A compiled model's checksum has passed from here on, and its prepared weights are
        // registered before the preparation looks for them.
        try corePackage.contentVerification?.finish()
        self.bindings = bindings
        self.stateBindings = stateBindings
        self.stateOwner = StateOwner(modelName: name)
        self.modelDescription = description
        self.configurationSnapshot = snapshot
        self.engine = .program(function)
        if let checked { prepareFirstPrediction(checked) }
        reporter.report(.done)
    }

    /// Loads a model without blocking the calling task.
    ///
    /// The work (reading, checking and lowering the model) runs on a Dispatch worker, so it
    /// never occupies a thread of Swift's cooperative pool. The method is
    /// `nonisolated(nonsending)`: it starts on the caller's actor, so an actor can pass a
    /// configuration it keeps (the configuration is copied before the work leaves the actor).
    ///
    /// ```swift
    /// let model = try await MLModel.load(contentsOf: compiledURL)
    /// ```
    ///
    /// - Throws: ``MLModelError``, as ``init(contentsOf:configuration:)`` does.
    public nonisolated(nonsending) class func load(
        contentsOf url: URL, configuration: MLModelConfiguration = MLModelConfiguration()
    ) async throws -> MLModel {
        let snapshot = configuration.snapshot
        return try await runOffPool { try MLModel(contentsOf: url, configuration: MLModelConfiguration(snapshot)) }
    }

    /// A copy of the configuration the model was loaded with.
    ///
    /// ```swift
    /// model.configuration.computeUnits      // .all unless set at load
    /// ```
    public var configuration: MLModelConfiguration { MLModelConfiguration(configurationSnapshot) }
}

import TesseraKernels
import TesseraTensor

/// One MIL function lowered to a tensor graph, ready to run many times (Sendable, immutable).
///
/// Lowering happens once, at load: every operation is checked against the ops Tessera
/// supports, its constant parameters (`axes`, `strides`, `pad_type`, …) are decoded and
/// resolved, and its weights become tensor constants in the type Tessera computes in
/// (Float16 and Int8/UInt8 blobs are converted to Float32 here, once). What is left for each
/// prediction is building the graph nodes from the input tensors, which costs microseconds;
/// the executor caches the plan by graph structure, so repeated predictions of one shape
/// reuse it.
///
/// Floating-point values are computed in Float32 whatever the model's precision (a `cast`
/// to fp16 keeps Float32) unless ``Float16Rounding/roundedToFloat16`` is asked for; integers
/// in Int32; outputs are converted to their declared
/// types at the end. A `classify` op passes its probabilities through; see ``classifier``.
///
/// ```swift
/// let package = try CoreMLPackage(contentsOf: url)
/// let function = try LoweredFunction(package: package, functionName: "main")
/// let outputs = try function.run(["x": MLTensor(shape: [1, 8], scalars: x, scalarType: Float.self)])
/// MLTensor.materialize(Array(outputs.values))
/// ```
package struct LoweredFunction: Sendable {
    /// The function's input names in declaration order, and their MIL types (states, iOS 18,
    /// included: `run` takes each state's current value as an input under its name and
    /// returns the value it wrote under the same name).
    package let inputs: [(name: String, type: MILValueType)]
    /// The function's output names in order.
    package let outputNames: [String]
    /// For a classifier (a function ending in `classify`), its labels and output names.
    package let classifier: LoweredClassifier?
    /// The model file's name, for messages.
    let file: String
    /// Whether fp16-typed values are rounded to fp16.
    let float16Rounding: Float16Rounding
    let steps: [LoweredStep]
    let slotCount: Int
    let constantTensors: [(slot: Int, tensor: MLTensor)]
    let inputSlots: [Int]
    /// Per output: the slot, and the scalar type the result is converted to (`nil` to keep it).
    let outputSlots: [(slot: Int, type: KernelScalarType?)]
    /// Per state the function writes: its name, the slot of its final value and its scalar type.
    let stateOutputs: [(name: String, slot: Int, type: KernelScalarType?)]
    /// Whether batches of given item shapes run as one execution, learned on first use, and
    /// how many batched executions ran (shared by copies of the function).
    let batchVerdicts = BatchVerdicts()

    /// A classifier's labels as strings (integer labels printed in decimal), or `nil` when the
    /// function has no `classify` op.
    ///
    /// For a classifier, ``run(_:)`` returns under ``LoweredClassifier/probabilitiesOutput``
    /// the class probabilities as a 1-D Float32 tensor in label order, and under
    /// ``LoweredClassifier/labelOutput`` a rank-0 Int32 tensor holding the index of the most
    /// probable label; the API layer turns them into Core ML's `classLabel` and probability
    /// dictionary.
    package var classLabels: [String]? { classifier?.labelStrings }

    /// The MIL op types Tessera lowers (`const` included).
    package static var supportedOperationTypes: Set<String> { MILOpRegistry.names }

    /// Lowers `functionName` (usually "main") of the package's ML program once.
    ///
    /// - Throws: ``ModelFormatError`` when the model is not an ML program, the function does
    ///   not exist, a parameter is malformed, or an operation is not supported; an unsupported
    ///   op fails with a message naming the op type and the model, e.g.
    ///   `model.mlmodel: operation 'e' (op type 'custom_layer') is not supported by Tessera`.
    /// - Parameter float16Rounding: Whether values the program types as fp16 are rounded to
    ///   fp16 after each op (``Float16Rounding/roundedToFloat16``) or kept in Float32 (the
    ///   default, a result Core ML's CPU may give too).
    package init(package: CoreMLPackage, functionName: String, float16Rounding: Float16Rounding = .none) throws {
        let file = package.modelDisplayName
        let program = try package.model.requireMLProgram(file: file)
        let function: MILFunction
        let block: MILBlock
        do {
            function = try program.function(named: functionName)
            block = try function.block()
        } catch var error as ModelFormatError {
            if error.file.isEmpty { error.file = file }
            throw error
        }
        let context = LoweringContext(package: package, float16Rounding: float16Rounding)
        context.reserveCapacity(function.inputs.count + block.operations.count)
        var inputs: [(name: String, type: MILValueType)] = []
        var inputSlots: [Int] = []
        for input in function.inputs {
            if case .state(let wrapped) = input.type, let tensorType = wrapped.tensorType {
                inputs.append((input.name, input.type))
                let slot = context.define(input.name, type: input.type)
                inputSlots.append(slot)
                context.declareState(input.name, slot: slot, type: tensorType)
                continue
            }
            guard input.type.tensorType != nil else {
                throw ModelFormatError(
                    .unsupportedModelType, file: file,
                    "input '\(input.name)' is \(input.type); Tessera runs functions whose inputs are tensors "
                        + "or states wrapping tensors")
            }
            inputs.append((input.name, input.type))
            inputSlots.append(context.define(input.name, type: input.type))
        }

        let (steps, classifier) = try LoweredBlock.steps(
            of: block.operations, outputs: block.outputs, context: context)

        var outputSlots: [(slot: Int, type: KernelScalarType?)] = []
        for output in block.outputs {
            guard let slot = try context.slot(for: output) else {
                throw ModelFormatError(
                    .invalidSpecification, file: file, "the function's output '\(output)' is never defined")
            }
            let dataType = context.types[output]?.tensorType?.dataType
            outputSlots.append((slot, dataType.flatMap(LoweredFunction.outputType)))
        }
        self.stateOutputs = context.writtenStates.map { state in
            (
                state, context.stateSlots[state]!,
                context.stateTypes[state].flatMap { LoweredFunction.outputType($0.dataType) }
            )
        }
        self.inputs = inputs
        self.inputSlots = inputSlots
        self.outputNames = block.outputs
        self.outputSlots = outputSlots
        self.classifier = classifier
        self.file = file
        self.float16Rounding = float16Rounding
        self.steps = steps
        self.slotCount = context.slotCount
        self.constantTensors = context.constantTensors
    }

    /// Builds the graph for one prediction on `inputs` and returns the output tensors by name.
    ///
    /// The tensors are lazy; materialize them together (`MLTensor.materialize(_:)`) so the
    /// whole prediction runs as one plan. (The one exception: a reshape target or slice bound
    /// computed at run time is read while building, which runs the small shape expression
    /// behind it on the calling thread.) Float inputs of any float type are converted to
    /// Float32, integer inputs to Int32.
    ///
    /// - Throws: ``LoweringError`` when an input is missing, has the wrong rank, a dimension
    ///   other than a fixed declared one, or a type that cannot be converted (the one check
    ///   of an input against the program's type; `MLModel` reports it as `.featureType`); or
    ///   `.shapeMismatch` naming the operation whose operands do not fit it, with the
    ///   `MLTensor` rule's message (the steps build inside `MLTensor.withShapeChecks`).
    ///   Never traps on such input.
    package func run(_ inputs: [String: MLTensor]) throws -> [String: MLTensor] {
        try outputs(from: evaluate(inputs))
    }

    /// Builds the graph for `inputs` and returns the whole value table (every slot filled).
    ///
    /// - Throws: as ``run(_:)`` does.
    func evaluate(_ inputs: [String: MLTensor]) throws -> [MLTensor?] {
        var values = [MLTensor?](repeating: nil, count: slotCount)
        for (slot, tensor) in constantTensors { values[slot] = tensor }
        for (index, input) in self.inputs.enumerated() {
            guard let tensor = inputs[input.name] else {
                throw LoweringError(
                    .missingInput, file: file, "the input '\(input.name)' (\(input.type)) was not given")
            }
            let bound = try bind(tensor, to: input.name, type: input.type)
            let isHalf = float16Rounding == .roundedToFloat16 && input.type.tensorType?.dataType == .float16
            values[inputSlots[index]] = isHalf ? Float16Rounding.rounded(bound) : bound
        }
        let bound = values
        do {
            // One shape-check scope for the whole prediction: a shape or type rule of an MLTensor
            // op that the operands break is thrown, not trapped, and later steps run on
            // placeholders until the scope ends. (A scope per step would cost a task-local
            // push per op on every prediction.)
            try MLTensor.withShapeChecks {
                for step in steps { try run(step, on: &values, scoped: false) }
            }
        } catch is MLTensorShapeError {
            // A rule broke somewhere: find the step by building again, one scope per step.
            values = bound
            for step in steps { try run(step, on: &values, scoped: true) }
        }
        return values
    }

    /// Builds `step`'s results from `values` and stores them there, checking them against
    /// the model's declared shapes.
    ///
    /// - Parameter scoped: Whether to build in a shape-check scope of its own, so that a
    ///   broken rule is reported under this step's name.
    /// - Throws: ``LoweringError`` `.shapeMismatch` naming the step.
    private func run(_ step: LoweredStep, on values: inout [MLTensor?], scoped: Bool) throws {
        let operands = step.operands.map { values[$0]! }
        let results: [MLTensor]
        do {
            results = scoped ? try MLTensor.withShapeChecks { try step.compute(operands) } : try step.compute(operands)
        } catch let error as MLTensorShapeError {
            throw shapeMismatch(step, error.message, operands)
        } catch let error as OperandError {
            // The lowering's own checks: MIL rules the tensor ops do not have.
            throw shapeMismatch(step, error.message, operands)
        }
        guard results.count == step.results.count else {
            throw LoweringError(
                .shapeMismatch, file: file,
                "operation '\(step.name)' (op type '\(step.type)') produced \(results.count) values "
                    + "for \(step.results.count) outputs")
        }
        for (index, result) in results.enumerated() {
            // Memory is allocated only when the graph runs, where a refusal traps; a model
            // whose parameters ask for absurd sizes must fail here instead.
            guard result.scalarCount <= LoweredFunction.maximumElementCount else {
                throw LoweringError(
                    .shapeMismatch, file: file,
                    "operation '\(step.name)' (op type '\(step.type)') would produce \(result.shape) "
                        + "(\(result.scalarCount) elements, more than Tessera allocates for one value)")
            }
            if let declared = step.declaredShapes[index] {
                let fits =
                    declared.count == result.rank
                    && zip(declared, result.shape).allSatisfy { $0.0 == nil || $0.0 == $0.1 }
                guard fits else {
                    throw LoweringError(
                        .shapeMismatch, file: file,
                        "operation '\(step.name)' (op type '\(step.type)') computed shape \(result.shape) "
                            + "where the model declares \(declared.map { $0.map(String.init) ?? "?" })")
                }
            }
            values[step.results[index]] = result
        }
    }

    /// The error for a step whose operands do not fit it.
    private func shapeMismatch(_ step: LoweredStep, _ message: String, _ operands: [MLTensor]) -> LoweringError {
        LoweringError(
            .shapeMismatch, file: file,
            "operation '\(step.name)' (op type '\(step.type)'): \(message) "
                + "(operands \(operands.map { "\($0.shape)" }.joined(separator: ", ")))")
    }

    /// The outputs (and written states) from a value table ``evaluate(_:)`` filled, cast to
    /// their declared types.
    func outputs(from values: [MLTensor?]) -> [String: MLTensor] {
        var outputs: [String: MLTensor] = [:]
        for (index, name) in outputNames.enumerated() {
            let (slot, type) = outputSlots[index]
            var tensor = values[slot]!
            if let type, tensor.kernelType != type, classifier?.labelOutput != name {
                tensor = tensor.converted(to: type)
            }
            outputs[name] = tensor
        }
        for (name, slot, type) in stateOutputs {
            let value = values[slot]!
            outputs[name] = type.map { value.converted(to: $0) } ?? value
        }
        return outputs
    }

    /// Checks an input against its declared type and converts it to its compute type.
    private func bind(_ tensor: MLTensor, to name: String, type declaredType: MILValueType) throws -> MLTensor {
        var type = declaredType
        if case .state(let wrapped) = declaredType { type = wrapped }
        guard let declared = type.tensorType else {
            throw LoweringError(.invalidInput, file: file, "input '\(name)' is \(type), not a tensor")
        }
        var tensor = tensor
        if let shape = LoweredFunction.checkableShape(type) {
            tensor = LoweredFunction.rankZeroAdjusted(tensor, to: shape)
            guard tensor.rank == shape.count else {
                throw LoweringError(
                    .invalidInput, file: file,
                    "input '\(name)' has rank \(tensor.rank) (\(tensor.shape)) but the function declares \(declared)")
            }
            for (size, declaredSize) in zip(tensor.shape, shape) where declaredSize != nil && declaredSize != size {
                throw LoweringError(
                    .invalidInput, file: file,
                    "input '\(name)' has shape \(tensor.shape) but the function declares \(declared)")
            }
        }
        guard let target = LoweredFunction.computeType(declared.dataType) else {
            throw LoweringError(
                .invalidInput, file: file, "input '\(name)' is declared \(declared), a type Tessera cannot compute in")
        }
        return tensor.converted(to: target)
    }

    /// A one-element tensor in the rank the function declares, where the two differ only by
    /// Core ML's rank-0 rule: a rank-0 input arrives as `[1]` (the only shape a multi-array
    /// can give it) and is bound as rank 0; a rank-0 value given for an input declared `[1]`
    /// (a 0-d NumPy array) is bound as `[1]`. Anything else is returned as it is.
    static func rankZeroAdjusted(_ tensor: MLTensor, to shape: [Int?]) -> MLTensor {
        if shape.isEmpty, tensor.shape == [1] { return tensor.reshaped(to: []) }
        if tensor.rank == 0, shape.count == 1, (shape[0] ?? 1) == 1 { return tensor.reshaped(to: [1]) }
        return tensor
    }

    /// The most elements one value may have (2³¹ − 1: 8 GiB of Float32).
    static let maximumElementCount = Int(Int32.max)

    /// An integer parameter a model file holds (an axis, size, index, offset, stride, pad: an
    /// ML program's constant integer parameters, a NeuralNetwork layer's integer fields) as
    /// Tessera computes with it: clamped to ±(2³¹ − 1). No real parameter reaches that, the
    /// clamp keeps a value's sign and meaning ("past the end", "before the start"), and sums and
    /// products of two clamped values never overflow. Seeds, which are not sizes, are read
    /// unclamped.
    static func clampedParameter(_ value: Int) -> Int {
        let limit = Int(Int32.max)
        return Swift.min(Swift.max(value, -limit), limit)
    }

    /// The most elements a size computed from numbers may give one axis: a range's length
    /// (MIL `range_1d`, NeuralNetwork `rangeStatic` and `rangeDynamic`) or a resized axis. Such
    /// values (a range's elements, a resampling grid) are made one by one on the host, at load
    /// or at prediction time, so the cap, 2²⁸, is below ``maximumElementCount``.
    static let maximumRangeCount = 1 << 28

    /// `value`, a size computed from numbers a model or its inputs hold, rounded toward zero;
    /// throws ``OperandError`` naming `what` when it is negative, not finite, or not below
    /// ``maximumRangeCount``, or when that many Float32 values would not fit the running
    /// prediction's memory limit (``requireHostValue(_:_:)``: a computed size is an axis of a
    /// result, and often a range or a grid made on the host).
    static func computedCount(_ value: Double, _ what: @autoclosure () -> String) throws -> Int {
        try require(value.isFinite && value >= 0, "\(what()) is \(value), not a finite count")
        try require(value < Double(maximumRangeCount), "\(what()) is \(value), more than \(maximumRangeCount)")
        let count = Int(value)
        try requireHostValue(count, what())
        return count
    }

    /// `value`, an index computed from numbers a model or its inputs hold, rounded toward zero;
    /// throws ``OperandError`` naming `what` when it is not finite or its magnitude is not below
    /// ``maximumElementCount`` (no axis is longer).
    static func computedIndex(_ value: Double, _ what: @autoclosure () -> String) throws -> Int {
        try require(
            value.isFinite && Swift.abs(value) < Double(maximumElementCount), "\(what()) is \(value), not an index")
        return Int(value)
    }

    /// How many values `start, start + step, …` has before reaching `end` (0 when `end` is
    /// behind `start`); throws ``OperandError`` for a zero step and for a length that
    /// ``computedCount(_:_:)`` refuses.
    static func rangeCount(start: Double, end: Double, step: Double) throws -> Int {
        try require(step != 0, "the range's step must not be 0")
        let length = ((end - start) / step).rounded(.up)
        return try computedCount(length < 0 ? 0 : length, "the range [\(start), \(end)) by \(step)")
    }

    /// A declared tensor shape with `nil` for unknown dimensions, or `nil` when the type is
    /// not a tensor of known rank (then nothing is checked).
    static func checkableShape(_ type: MILValueType) -> [Int?]? {
        guard let tensor = type.tensorType, tensor.rank >= 0, tensor.dimensions.count == tensor.rank else { return nil }
        var shape: [Int?] = []
        for dimension in tensor.dimensions {
            switch dimension {
            case .constant(let size): shape.append(size)
            case .unknown(let variadic):
                if variadic { return nil }
                shape.append(nil)
            }
        }
        return shape
    }

    /// The type Tessera computes values of a MIL data type in.
    static func computeType(_ type: MILDataType) -> KernelScalarType? {
        switch type {
        case .float16, .float32, .float64, .bfloat16: .float32
        case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32, .uint64: .int32
        case .bool: .bool
        default: nil
        }
    }

    /// The scalar type an output of a MIL data type is delivered in.
    static func outputType(_ type: MILDataType) -> KernelScalarType? {
        switch type {
        case .float16: .float16
        case .float32, .bfloat16: .float32
        case .float64: .float64
        case .int8: .int8
        case .uint8: .uint8
        case .int16: .int16
        case .uint16: .uint16
        case .int32, .int64, .uint64: .int32
        case .uint32: .uint32
        case .bool: .bool
        default: nil
        }
    }
}

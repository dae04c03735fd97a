import TesseraTensor

/// Load-time state of lowering one function: the value table being laid out, the decoded
/// constants and the steps built so far. Used only while ``LoweredFunction`` is created.
final class LoweringContext {
    /// The package the function comes from (for weight blobs).
    let package: CoreMLPackage
    /// The specification file's name, for messages.
    let file: String
    /// Slot of every value defined so far.
    private(set) var slots: [String: Int] = [:]
    /// Declared types of every value defined so far.
    private(set) var types: [String: MILValueType] = [:]
    /// Decoded const ops by output name.
    private(set) var constants: [String: MILConstant] = [:]
    /// Slots holding constant tensors, filled before each run.
    private(set) var constantTensors: [(slot: Int, tensor: MLTensor)] = []
    /// The number of slots laid out.
    private(set) var slotCount = 0
    /// For each state (a function input of state type), the slot holding its current value:
    /// the input itself until a `write_state` rebinds it.
    private(set) var stateSlots: [String: Int] = [:]
    /// The states' declared tensor types.
    private(set) var stateTypes: [String: MILTensorType] = [:]
    /// The states written so far, in first-write order.
    private(set) var writtenStates: [String] = []
    /// Decompressed `constexpr_*` results by name: iOS 18 constexpr ops can read earlier ones.
    private(set) var decompressed: [String: DenseConstant] = [:]

    /// Whether fp16-typed results are rounded to fp16 (see ``Float16Rounding``).
    let float16Rounding: Float16Rounding

    init(package: CoreMLPackage, float16Rounding: Float16Rounding = .none) {
        self.package = package
        self.float16Rounding = float16Rounding
        file = package.modelDisplayName
    }

    /// Makes room for about `count` values (a function's inputs and operations), so the
    /// tables are not rehashed again and again as a large program's values arrive.
    func reserveCapacity(_ count: Int) {
        slots.reserveCapacity(count)
        types.reserveCapacity(count)
        constants.reserveCapacity(count)
    }

    /// A new slot for value `name` of type `type`.
    func define(_ name: String, type: MILValueType) -> Int {
        slotCount += 1
        slots[name] = slotCount - 1
        types[name] = type
        return slotCount - 1
    }

    /// Declares the function input in `slot` as state `name`.
    func declareState(_ name: String, slot: Int, type: MILTensorType) {
        stateSlots[name] = slot
        stateTypes[name] = type
    }

    /// Makes the value in `slot` the current value of state `name` (a `write_state`); later
    /// `read_state`s see it and the function returns it under the state's name.
    func writeState(_ name: String, slot: Int) {
        if !writtenStates.contains(name) { writtenStates.append(name) }
        stateSlots[name] = slot
    }

    /// Decodes a MIL value of this context's package into a ``MILConstant`` (see
    /// ``MILConstant/init(_:in:what:)``). A method of the context so that the package is read
    /// in place: fetching `context.package` at each of a model's hundreds of constants copied
    /// the package's fields, with their reference counts, every time.
    ///
    /// - Throws: ``ModelFormatError`` as ``MILConstant/init(_:in:what:)`` does.
    func constant(_ value: MILValue, what: @autoclosure () -> String) throws -> MILConstant {
        try MILConstant(value, in: package, what: what())
    }

    /// Records a const op's value; its tensor is built only if an op uses it as an operand.
    func defineConstant(_ name: String, _ constant: MILConstant, type: MILValueType) {
        constants[name] = constant
        types[name] = type
    }

    /// Records a decompressed `constexpr_*` result as a Float32 constant.
    func defineDecompressed(_ name: String, _ dense: DenseConstant, type: MILValueType) {
        decompressed[name] = dense
        defineConstant(
            name, MILConstant(shape: dense.shape, dataType: .float32, elements: .floats(dense.values)), type: type)
    }

    /// The slot holding value `name`, building the tensor of a constant on first use; `nil`
    /// for an unknown name.
    func slot(for name: String) throws -> Int? {
        if let slot = slots[name] { return slot }
        guard let constant = constants[name] else { return nil }
        let slot = try literalSlot(constant)
        slots[name] = slot
        return slot
    }

    /// A slot holding `constant` as a tensor (weights are converted to their compute type
    /// here, once).
    func literalSlot(_ constant: MILConstant) throws -> Int {
        let tensor: MLTensor
        do {
            tensor = try constant.tensor()
        } catch let error as OperandError {
            throw ModelFormatError(.invalidSpecification, file: file, error.message)
        }
        slotCount += 1
        constantTensors.append((slotCount - 1, tensor))
        return slotCount - 1
    }
}

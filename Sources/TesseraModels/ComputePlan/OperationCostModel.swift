/// The work one MIL operation does, estimated from the types of its operands and results.
///
/// `flops` counts multiply-adds as two operations for convolutions, matrix products and
/// attention, and one operation per result element (per input element for reductions)
/// for everything else; `bytes` is the size of every tensor the operation reads and writes.
/// Dimensions the program leaves unknown count as 1.
struct OperationCostEstimate: Sendable, Equatable {
    /// Floating-point (or integer) operations.
    var flops: Double
    /// Bytes read and written.
    var bytes: Double

    /// The reference CPU the estimate is scaled to: 50 GFLOP/s of matrix work…
    static let referenceFlopsPerSecond = 50e9
    /// …and 10 GB/s of memory traffic (one or two cores of this class of machine).
    static let referenceBytesPerSecond = 10e9

    /// Estimated seconds on the reference CPU: compute time plus memory time.
    var seconds: Double { flops / Self.referenceFlopsPerSecond + bytes / Self.referenceBytesPerSecond }

    /// Nothing to do (constants, which exist before any prediction).
    static let zero = OperationCostEstimate(flops: 0, bytes: 0)
}

/// Estimates operation costs while walking a function: it remembers the type of every
/// named value in scope (function inputs, block inputs, operation outputs) and the value of
/// every `const`, so operands given by name can be sized.
struct OperationCostModel {
    /// Types of the named values defined so far.
    private var types: [String: MILValueType] = [:]
    /// Values of the `const` operations seen so far (for flags such as `transpose_x`).
    private var constants: [String: MILValue] = [:]

    /// How an op type's work is estimated: its registration's ``MILOpCost``. An op type
    /// Tessera does not run (the compute plan also describes models that do not load) is
    /// estimated by its element counts, and a `constexpr_*` one Tessera does not decompress
    /// as a load-time constant, as its name says.
    static func cost(of operatorName: String) -> MILOpCost {
        if let op = MILOpRegistry.op(named: operatorName) { return op.cost }
        return operatorName.hasPrefix("constexpr_") ? .loadTime : .elementwise
    }

    /// Operations whose work is done once at load, not per prediction.
    static func isLoadTimeConstant(_ operatorName: String) -> Bool {
        cost(of: operatorName) == .loadTime
    }

    /// Records values coming into scope.
    mutating func define(_ values: [MILNamedValueType]) {
        for value in values { types[value.name] = value.type }
    }

    /// Estimates `operation` and records its outputs (and, for a `const`, its value).
    mutating func estimate(_ operation: MILOperation) -> OperationCostEstimate {
        defer {
            define(operation.outputs)
            if operation.type == "const", let output = operation.outputs.first, let value = operation.attributes["val"]
            {
                constants[output.name] = value
            }
        }
        let cost = Self.cost(of: operation.type)
        if cost == .loadTime { return .zero }
        let outputElements = operation.outputs.reduce(0.0) { $0 + Self.elements(of: $1.type) }
        var bytes = operation.outputs.reduce(0.0) { $0 + Self.bytes(of: $1.type) }
        var inputElements = 0.0
        for argument in operation.inputs.values {
            for binding in argument.bindings {
                guard let type = type(of: binding) else { continue }
                bytes += Self.bytes(of: type)
                inputElements += Self.elements(of: type)
            }
        }
        let flops: Double
        switch cost {
        case .loadTime:
            return .zero
        case .convolution:
            flops = 2 * outputElements * Self.trailingProduct(shape(of: operation, "weight"))
        case .transposedConvolution:
            flops = 2 * elements(of: operation, "x") * Self.trailingProduct(shape(of: operation, "weight"))
        case .linear:
            flops = 2 * outputElements * Double(shape(of: operation, "weight").last ?? 1)
        case .matmul:
            let x = shape(of: operation, "x")
            let transposed = flag(of: operation, "transpose_x")
            let inner = x.count >= 2 ? (transposed ? x[x.count - 2] : x[x.count - 1]) : (x.first ?? 1)
            flops = 2 * outputElements * Double(inner)
        case .einsum:
            flops = 2 * outputElements * Double(shape(of: operation, "values").last ?? 1)
        case .attention:
            let query = shape(of: operation, "query")
            let key = shape(of: operation, "key")
            let queryLength = Double(query.dropLast().last ?? 1)
            let embedding = Double(query.last ?? 1)
            let keyLength = Double(key.dropLast().last ?? 1)
            let batch = elements(of: operation, "query") / max(queryLength * embedding, 1)
            let valueEmbedding = Double(shape(of: operation, "value").last ?? 1)
            flops = batch * queryLength * keyLength * (2 * embedding + 2 * valueEmbedding + 5)
        case .recurrent:
            let x = shape(of: operation, "x")
            let steps = Double(x.count == 3 ? x[0] * x[1] : 1)
            let directions: Double = operation.inputs["weight_ih_back"] == nil ? 1 : 2
            let gateRows = Double(shape(of: operation, "weight_hh").first ?? 1)
            let weights = elements(of: operation, "weight_ih") + elements(of: operation, "weight_hh")
            flops = directions * steps * (2 * weights + 10 * gateRows)
        case .reduction:
            flops = inputElements
        case .dataMovement:
            flops = outputElements
            bytes = 2 * Self.bytes(ofElements: outputElements, like: operation.outputs.first?.type)
        case .transcendental:
            flops = 4 * max(outputElements, inputElements / 2)
        case .elementwise:
            flops = max(outputElements, inputElements / 2)
        }
        return OperationCostEstimate(flops: flops, bytes: bytes)
    }

    /// The type a binding refers to: a named value's, or a literal's own.
    private func type(of binding: MILBinding) -> MILValueType? {
        switch binding {
        case .name(let name): types[name]
        case .value(let value): value.type
        }
    }

    /// The first binding of parameter `name`, as a type.
    private func type(of operation: MILOperation, _ name: String) -> MILValueType? {
        operation.inputs[name]?.bindings.first.flatMap { type(of: $0) }
    }

    /// The shape of parameter `name` (unknown dimensions as 1; `[]` when absent).
    private func shape(of operation: MILOperation, _ name: String) -> [Int] {
        guard let tensor = type(of: operation, name).flatMap(Self.tensorType) else { return [] }
        return tensor.dimensions.map { if case .constant(let size) = $0 { max(size, 0) } else { 1 } }
    }

    /// The element count of parameter `name`.
    private func elements(of operation: MILOperation, _ name: String) -> Double {
        type(of: operation, name).map(Self.elements) ?? 0
    }

    /// A boolean parameter given as a literal or a `const`; `false` when absent or unknown.
    private func flag(of operation: MILOperation, _ name: String) -> Bool {
        guard let binding = operation.inputs[name]?.bindings.first else { return false }
        let value: MILValue? =
            switch binding {
            case .name(let variable): constants[variable]
            case .value(let value): value
            }
        if case .bools(let bools)? = value?.tensor { return bools.first ?? false }
        return false
    }

    /// The product of every dimension but the first (a weight's per-output-channel size).
    private static func trailingProduct(_ shape: [Int]) -> Double {
        shape.dropFirst().reduce(1.0) { $0 * Double($1) }
    }

    /// The tensor inside a type (a state's wrapped tensor too).
    private static func tensorType(_ type: MILValueType) -> MILTensorType? {
        switch type {
        case .tensor(let tensor): tensor
        case .state(let wrapped): tensorType(wrapped)
        default: nil
        }
    }

    /// Elements of a value of `type`; unknown dimensions count as 1, lists as their known length.
    static func elements(of type: MILValueType) -> Double {
        switch type {
        case .tensor(let tensor):
            return tensor.dimensions.reduce(1.0) { product, dimension in
                if case .constant(let size) = dimension { product * Double(max(size, 0)) } else { product }
            }
        case .state(let wrapped): return elements(of: wrapped)
        case .list(let element, let length):
            let count: Double = if case .constant(let size)? = length { Double(size) } else { 1 }
            return count * elements(of: element)
        case .tuple(let types): return types.reduce(0) { $0 + elements(of: $1) }
        case .dictionary: return 1
        }
    }

    /// Bytes of a value of `type` (strings count 8 bytes an element).
    static func bytes(of type: MILValueType) -> Double {
        switch type {
        case .tensor(let tensor): return elements(of: type) * Double(tensor.dataType.bitWidth ?? 64) / 8
        case .state(let wrapped): return bytes(of: wrapped)
        case .list(let element, let length):
            let count: Double = if case .constant(let size)? = length { Double(size) } else { 1 }
            return count * bytes(of: element)
        case .tuple(let types): return types.reduce(0) { $0 + bytes(of: $1) }
        case .dictionary: return 8
        }
    }

    /// Bytes of `count` elements of the data type of `type` (4 bytes when unknown).
    private static func bytes(ofElements count: Double, like type: MILValueType?) -> Double {
        let bits = type.flatMap(tensorType)?.dataType.bitWidth ?? 32
        return count * Double(bits) / 8
    }
}

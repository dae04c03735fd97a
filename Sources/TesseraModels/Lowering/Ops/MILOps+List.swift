import TesseraKernels
import TesseraTensor

/// The tensor-list ops: `make_list`, `list_length`, `list_write`, `list_read`,
/// `list_gather`, `list_scatter`.
///
/// A list is carried as one tensor `[length, elem_shape…]` whose rows are the elements (a
/// list is a value like any other: a `while_loop` variable, a `cond` result). `make_list`
/// starts `init_length` rows of zeros (elements not written read as zeros; Core ML leaves
/// them undefined); a write or scatter past the end grows the list, with zero rows between,
/// when the list is `dynamic_length` (the default), and fails the prediction otherwise.
/// Indices are read when the prediction is built (they choose the graph's shape, as a slice
/// bound computed at run time does); negative ones and ones past the end fail it.
///
/// `elem_shape` sizes are constants, values the program computes (read when the prediction is
/// built), or symbols (strings: a size known only once an element is written). A list with
/// a symbolic size starts as `[length, 0]` rows, and its first write or scatter gives the
/// rows the written element's shape (unwritten rows read as zeros of it); reading such a
/// list before any write yields empty elements (Core ML leaves them undefined).
extension MILOp {
    static let listOps: [MILOp] = [
        MILOp("make_list", batch: .notSeparable, cost: .elementwise) { lowering in
            let length = try lowering.runtimeNumber("init_length") ?? .constant(1)
            let shape = try listElementShape(&lowering)
            let dtype = try lowering.string("dtype") ?? "fp32"
            let type: KernelScalarType
            switch dtype {
            case "fp16", "fp32": type = .float32
            case "int32": type = .int32
            case "bool": type = .bool
            default: throw lowering.invalid("dtype '\(dtype)' must be fp16, fp32, int32 or bool")
            }
            return { args in
                let count = try LoweredFunction.computedCount(try length.value(args), "init_length")
                var sizes: [Int] = []
                for size in shape {
                    switch size {
                    case .size(let value): sizes.append(value)
                    case .computed(let number):
                        sizes.append(try LoweredFunction.computedCount(try number.value(args), "an elem_shape size"))
                    case .symbolic:
                        return [MLTensor.scalarConstant(0, type: type).broadcast(to: [count, 0])]
                    }
                }
                return [MLTensor.scalarConstant(0, type: type).broadcast(to: [count] + sizes)]
            }
        },
        MILOp("list_length", batch: .notSeparable, cost: .elementwise) { lowering in
            let list = try lowering.tensor("ls")
            return { args in [MLTensor(shape: [], scalars: [Int32(args[list].shape[0])], scalarType: Int32.self)] }
        },
        MILOp("list_read", batch: .notSeparable, cost: .dataMovement) { lowering in
            let list = try lowering.tensor("ls")
            let index = try lowering.required(lowering.runtimeNumber("index"), "index")
            return { args in
                let rows = args[list]
                let i = try listIndex(index.value(args), length: rows.shape[0], growing: false)
                return [rows.narrowed(alongAxis: 0, start: i, count: 1).reshaped(to: Array(rows.shape.dropFirst()))]
            }
        },
        MILOp("list_gather", batch: .notSeparable, cost: .dataMovement) { lowering in
            let list = try lowering.tensor("ls")
            let indices = try lowering.required(lowering.runtimeInts("indices"), "indices")
            return { args in
                let rows = args[list]
                let chosen = try indices.values(args).map {
                    try listIndex(Double($0), length: rows.shape[0], growing: false)
                }
                let index = MLTensor(shape: [chosen.count], scalars: chosen.map { Int32($0) }, scalarType: Int32.self)
                return [rows.gathering(atIndices: index, alongAxis: 0)]
            }
        },
        MILOp("list_write", batch: .notSeparable, cost: .dataMovement) { lowering in
            let list = try lowering.tensor("ls")
            let index = try lowering.required(lowering.runtimeNumber("index"), "index")
            let value = try lowering.tensor("value")
            let dynamic = try listIsDynamic(lowering)
            return { args in
                let rows = args[list]
                let i = try listIndex(index.value(args), length: rows.shape[0], growing: dynamic)
                let element = args[value].converted(to: rows.kernelType)
                return [try listReplacing(rows, at: [i], with: element.expandingShape(at: 0))]
            }
        },
        MILOp("list_scatter", batch: .notSeparable, cost: .dataMovement) { lowering in
            let list = try lowering.tensor("ls")
            let indices = try lowering.required(lowering.runtimeInts("indices"), "indices")
            let value = try lowering.tensor("value")
            let dynamic = try listIsDynamic(lowering)
            return { args in
                let rows = args[list]
                let chosen = try indices.values(args).map {
                    try listIndex(Double($0), length: rows.shape[0], growing: dynamic)
                }
                return [try listReplacing(rows, at: chosen, with: args[value].converted(to: rows.kernelType))]
            }
        },
    ]

    /// One size of `make_list`'s `elem_shape`.
    enum ListElementSize: Sendable {
        /// A constant size.
        case size(Int)
        /// A size the program computes, read when the prediction is built.
        case computed(RuntimeNumber)
        /// A symbolic size (a string): known once an element is written.
        case symbolic
    }

    /// `make_list`'s `elem_shape`: per binding a constant (an integer, a list of them, or a
    /// symbol's name), or a scalar the program computes.
    static func listElementShape(_ lowering: inout OperationLowering) throws -> [ListElementSize] {
        guard let bindings = lowering.operation.inputs["elem_shape"]?.bindings else {
            throw lowering.invalid("the required input 'elem_shape' is missing")
        }
        var sizes: [ListElementSize] = []
        for binding in bindings {
            let constant: MILConstant
            switch binding {
            case .name(let name):
                if let known = lowering.context.constants[name] {
                    constant = known
                } else {
                    guard let slot = try lowering.context.slot(for: name) else {
                        throw lowering.invalid("elem_shape refers to '\(name)', which is not defined before it")
                    }
                    sizes.append(.computed(.operand(lowering.appendOperand(slot: slot))))
                    continue
                }
            case .value(let value):
                constant = try lowering.context.constant(value, what: "elem_shape of make_list")
            }
            if let integers = constant.integers {
                guard integers.allSatisfy({ $0 >= 0 }) else {
                    throw lowering.invalid("elem_shape \(integers) holds a negative size")
                }
                sizes += integers.map { .size($0) }
            } else if let strings = constant.strings {
                sizes += strings.map { _ in .symbolic }
            } else {
                throw lowering.invalid("elem_shape must hold sizes or symbols")
            }
        }
        return sizes
    }

    /// Whether the list the op writes may grow (`dynamic_length` of its `make_list`, which
    /// the op cannot see: Tessera lets every list grow unless the op itself says otherwise).
    static func listIsDynamic(_ lowering: OperationLowering) throws -> Bool {
        try lowering.bool("dynamic_length") ?? true
    }

    /// A list index checked against the length (with `growing`, any non-negative index).
    static func listIndex(_ value: Double, length: Int, growing: Bool) throws -> Int {
        let index = try LoweredFunction.computedIndex(value, "list index")
        try require(index >= 0 && (growing || index < length), "list index \(index) is outside the list of \(length)")
        return index
    }

    /// `rows` with the rows at `indices` replaced by the rows of `values`, grown with zero
    /// rows to reach the largest index.
    static func listReplacing(_ rows: MLTensor, at indices: [Int], with values: MLTensor) throws -> MLTensor {
        var rows = rows
        // A list whose element shape was symbolic takes the written elements' shape.
        if rows.rank == 2 && rows.shape[1] == 0 && values.rank >= 1 && Array(values.shape.dropFirst()) != [0] {
            rows = MLTensor.scalarConstant(0, type: rows.kernelType).broadcast(
                to: [rows.shape[0]] + values.shape.dropFirst())
        }
        let element = Array(rows.shape.dropFirst())
        try require(
            values.shape == [indices.count] + element,
            "values \(values.shape) do not fit \(indices.count) elements of shape \(element)")
        var list = rows
        let length = (indices.max() ?? -1) + 1
        if length > rows.shape[0] {
            let zeros = MLTensor.scalarConstant(0, type: rows.kernelType).broadcast(
                to: [length - rows.shape[0]] + element)
            list = rows.shape[0] == 0 ? zeros : MLTensor(concatenating: [rows, zeros], alongAxis: 0)
        }
        if indices.isEmpty { return list }
        let inner = element.reduce(1, *)
        let index = MLTensor(shape: [1, indices.count, 1], scalars: indices.map { Int32($0) }, scalarType: Int32.self)
        let replaced = list.reshaped(to: [1, list.shape[0], inner]).replacing(
            with: values.reshaped(to: [1, indices.count, inner]),
            atIndices: index.broadcast(to: [1, indices.count, inner]), alongAxis: 1)
        return replaced.reshaped(to: list.shape)
    }
}

import TesseraKernels

/// The type of a MIL value (`MILSpec.ValueType`): a tensor, or a list, tuple, dictionary or
/// state built from tensors.
package indirect enum MILValueType: Sendable, Equatable, CustomStringConvertible {
    /// A tensor of one element type and a (possibly partly unknown) shape.
    case tensor(MILTensorType)
    /// A homogeneous list; `length` is `nil` when the schema leaves it out.
    case list(element: MILValueType, length: MILDimension?)
    /// A fixed sequence of differently typed values.
    case tuple([MILValueType])
    /// A dictionary from keys of one type to values of another.
    case dictionary(key: MILValueType, value: MILValueType)
    /// Model state (iOS 18) wrapping a tensor type.
    case state(MILValueType)

    /// The tensor type, when this is a tensor.
    package var tensorType: MILTensorType? {
        if case .tensor(let type) = self { return type }
        return nil
    }

    /// `fp32[1, 8]`, `list<string>[3]`, …
    package var description: String {
        switch self {
        case .tensor(let type): "\(type)"
        case .list(let element, let length): "list<\(element)>" + (length.map { "[\($0)]" } ?? "")
        case .tuple(let types): "tuple<" + types.map(\.description).joined(separator: ", ") + ">"
        case .dictionary(let key, let value): "dict<\(key), \(value)>"
        case .state(let wrapped): "state<\(wrapped)>"
        }
    }
}

/// A tensor's element type and shape (`MILSpec.TensorType`).
package struct MILTensorType: Sendable, Equatable, CustomStringConvertible {
    /// The element type.
    package var dataType: MILDataType
    /// The rank; −1 when unknown (then `dimensions` is empty).
    package var rank: Int
    /// One entry per axis.
    package var dimensions: [MILDimension]
    /// Extra attributes the writer attached (rarely used).
    package var attributes: [String: MILValue]

    /// Creates a tensor type.
    package init(dataType: MILDataType, rank: Int, dimensions: [MILDimension], attributes: [String: MILValue] = [:]) {
        self.dataType = dataType
        self.rank = rank
        self.dimensions = dimensions
        self.attributes = attributes
    }

    /// The shape when every dimension is a constant, else `nil`. A rank-0 tensor has shape `[]`.
    package var shape: [Int]? {
        guard rank >= 0, dimensions.count == rank else { return nil }
        var shape: [Int] = []
        shape.reserveCapacity(rank)
        for dimension in dimensions {
            guard case .constant(let size) = dimension else { return nil }
            shape.append(size)
        }
        return shape
    }

    /// The number of elements when the shape is fully known and the count fits an `Int`.
    package var elementCount: Int? { shape?.checkedElementCount }

    /// `fp32[1, 8]`; unknown dimensions print as `?` (or `*` when variadic).
    package var description: String {
        "\(dataType)[" + dimensions.map(\.description).joined(separator: ", ") + "]"
    }
}

/// One dimension of a MIL tensor type (`MILSpec.Dimension`).
package enum MILDimension: Sendable, Equatable, CustomStringConvertible {
    /// A known size.
    case constant(Int)
    /// A size known only when the model runs; `variadic` marks a run of unknown dimensions.
    case unknown(variadic: Bool)

    /// The size, or `?` / `*`.
    package var description: String {
        switch self {
        case .constant(let size): "\(size)"
        case .unknown(let variadic): variadic ? "*" : "?"
        }
    }
}

/// A name and its type: a function input, an operation output or a block input.
package struct MILNamedValueType: Sendable, Equatable {
    /// The variable's name, unique within its function.
    package var name: String
    /// The variable's type.
    package var type: MILValueType
}

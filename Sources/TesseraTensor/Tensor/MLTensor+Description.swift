import TesseraGraph
import TesseraKernels

extension MLTensor: CustomStringConvertible, CustomReflectable {
    /// A readable summary; the elements appear only once the tensor is materialized (printing
    /// never triggers computation).
    ///
    /// ```swift
    /// print(MLTensor([1, 2, 3] as [Float]))
    /// // MLTensor(shape: [3], scalarType: Float, [1.0, 2.0, 3.0])
    /// ```
    public var description: String {
        let head = "MLTensor(shape: \(shape), scalarType: \(scalarType)"
        guard isMaterialized else { return head + ", not yet computed)" }
        let limit = 64
        let values = scalars(of: Double.self)
        var text = values.prefix(limit).map { kernelType == .bool ? ($0 != 0 ? "true" : "false") : format($0) }
            .joined(separator: ", ")
        if values.count > limit { text += ", … (\(values.count) scalars)" }
        return head + ", [\(text)])"
    }

    private func format(_ value: Double) -> String {
        kernelType.isFloatingPoint ? "\(kernelType == .float64 ? value : Double(Float(value)))" : "\(Int64(value))"
    }

    /// The shape, the scalar type and whether the tensor is computed.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["shape": shape, "scalarType": "\(scalarType)", "isMaterialized": isMaterialized],
            displayStyle: .struct)
    }
}

extension MLTensor: ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral
{
    /// A rank-0 `Float` tensor: `let t: MLTensor = 1.5`.
    ///
    /// In an operation with a tensor of another scalar type (`halfTensor * 1.5`), the literal
    /// takes that tensor's type.
    public init(floatLiteral value: Double) {
        self.init(inline: InlineFloats(scalar: Float(value)), literal: value)
    }

    /// A rank-0 `Int32` tensor: `let t: MLTensor = 3`.
    ///
    /// In an operation with a tensor of another scalar type (`floatTensor * 2`), the literal
    /// takes that tensor's type.
    public init(integerLiteral value: Int) {
        self.init(node: MLTensor.scalarConstant(Double(value), type: .int32).node, literal: Double(value))
    }

    /// A rank-0 `Bool` tensor: `let t: MLTensor = true`.
    public init(booleanLiteral value: Bool) {
        self.init(value, scalarType: Bool.self)
    }

    /// Stacks the elements along a new first axis: `let m: MLTensor = [[1, 2], [3, 4]]`.
    ///
    /// - Precondition: the elements have one shape and scalar type.
    public init(arrayLiteral elements: MLTensor...) {
        guard MLTensor.check(!elements.isEmpty, "[MLTensor] an array literal needs at least one element") else {
            self = .placeholder()
            return
        }
        let first = elements[0]
        for element in elements {
            guard
                MLTensor.check(
                    element.shape == first.shape && element.kernelType == first.kernelType,
                    "[MLTensor] array literal elements differ: \(element.shape) \(element.kernelType) vs \(first.shape) \(first.kernelType)"
                )
            else {
                self = first.placeholder
                return
            }
        }
        let expanded = elements.map { MLTensor(.reshape([1] + first.shape), [$0]) }
        self.init(.concat(axis: 0), expanded)
    }
}

import Foundation
import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// A tensor of `shape` whose storage the closure fills (row-major); the shared core of the
    /// initializers.
    package init(
        shape: [Int], kernelType: KernelScalarType, fill: (UnsafeMutableRawPointer, Int) throws -> Void
    ) rethrows {
        guard MLTensor.check(shape.allSatisfy { $0 >= 0 }, "[MLTensor] negative dimension in shape \(shape)") else {
            self = .placeholder(shape: shape, type: kernelType)
            return
        }
        let count = shape.reduce(1, *)
        let storage = TensorStorage.allocate(count: count, type: kernelType)
        try fill(storage.pointer, count)
        self.init(value: TensorValue(storage: storage, layout: StridedLayout(contiguous: shape), type: kernelType))
    }

    /// Creates a tensor of `shape` from scalars in row-major (first-major) order.
    ///
    /// ```swift
    /// let m = MLTensor(shape: [2, 2], scalars: [1, 2, 3, 4], scalarType: Int32.self)
    /// ```
    ///
    /// - Precondition: the number of scalars equals the product of `shape`.
    ///
    /// The collection's element type is `Scalar` (Apple's documentation renders the parameter
    /// as `some Collection`), so literals take the requested type.
    public init<Scalar: MLTensorScalar>(
        shape: [Int], scalars: some Collection<Scalar>, scalarType: Scalar.Type = Scalar.self
    ) {
        let values = Array(scalars)
        guard
            MLTensor.check(
                values.count == shape.reduce(1, *),
                "[MLTensor] \(values.count) scalars do not fill shape \(shape) (\(shape.reduce(1, *)) needed)")
        else {
            self = .placeholder(shape: shape, type: Scalar.kernelScalarType)
            return
        }
        self.init(shape: shape, kernelType: Scalar.kernelScalarType) { pointer, count in
            values.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }

    /// Creates a `Float` tensor of `shape` from scalars in row-major order.
    ///
    /// - Precondition: the number of scalars equals the product of `shape`.
    public init(shape: [Int], scalars: some Collection<Float>) {
        self.init(shape: shape, scalars: Array(scalars), scalarType: Float.self)
    }

    /// Creates a one-dimensional tensor of `Scalar` values.
    ///
    /// ```swift
    /// let t = MLTensor([1, 2, 3], scalarType: Int32.self)   // shape [3]
    /// ```
    public init<Scalar: MLTensorScalar>(_ scalars: some Collection<Scalar>, scalarType: Scalar.Type = Scalar.self) {
        self.init(shape: [scalars.count], scalars: scalars, scalarType: scalarType)
    }

    /// Creates a one-dimensional `Float` tensor.
    public init(_ scalars: some Collection<Float>) {
        self.init(shape: [scalars.count], scalars: Array(scalars), scalarType: Float.self)
    }

    /// Creates a one-dimensional `Int32` tensor.
    public init(_ scalars: some Collection<Int32>) {
        self.init(shape: [scalars.count], scalars: Array(scalars), scalarType: Int32.self)
    }

    /// Creates a zero-dimensional (rank 0, shape `[]`) tensor holding `value`.
    public init<Scalar: MLTensorScalar>(_ value: Scalar, scalarType: Scalar.Type = Scalar.self) {
        self.init(shape: [], scalars: [value], scalarType: Scalar.self)
    }

    /// Creates a tensor of `shape` with every element equal to `repeatedValue`.
    ///
    /// A float literal without `scalarType:` makes a `Float` tensor, as in Core ML.
    @_disfavoredOverload
    public init<Scalar: MLTensorScalar>(
        repeating repeatedValue: Scalar, shape: [Int], scalarType: Scalar.Type = Scalar.self
    ) {
        self.init(shape: shape, kernelType: Scalar.kernelScalarType) { pointer, count in
            pointer.bindMemory(to: Scalar.self, capacity: count).initialize(repeating: repeatedValue, count: count)
        }
    }

    /// Creates a `Float` tensor of `shape` with every element equal to `repeatedValue`.
    public init(repeating repeatedValue: Float, shape: [Int]) {
        self.init(repeating: repeatedValue, shape: shape, scalarType: Float.self)
    }

    /// Creates a floating-point tensor of zeros.
    public init<Scalar>(zeros shape: [Int], scalarType: Scalar.Type = Scalar.self)
    where Scalar: MLTensorScalar, Scalar: BinaryFloatingPoint, Scalar.RawSignificand: FixedWidthInteger {
        self.init(repeating: Scalar.zero, shape: shape, scalarType: scalarType)
    }

    /// Creates an integer tensor of zeros.
    public init<Scalar>(zeros shape: [Int], scalarType: Scalar.Type = Scalar.self)
    where Scalar: MLTensorScalar, Scalar: FixedWidthInteger {
        self.init(repeating: Scalar.zero, shape: shape, scalarType: scalarType)
    }

    /// Creates a floating-point tensor of ones.
    public init<Scalar>(ones shape: [Int], scalarType: Scalar.Type = Scalar.self)
    where Scalar: MLTensorScalar, Scalar: BinaryFloatingPoint, Scalar.RawSignificand: FixedWidthInteger {
        self.init(repeating: 1, shape: shape, scalarType: scalarType)
    }

    /// Creates an integer tensor of ones.
    public init<Scalar>(ones shape: [Int], scalarType: Scalar.Type = Scalar.self)
    where Scalar: MLTensorScalar, Scalar: FixedWidthInteger {
        self.init(repeating: 1, shape: shape, scalarType: scalarType)
    }
}

import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Creates a one-dimensional `Float` tensor of values from `start` up to, not including,
    /// `end`, stepping by `stride`.
    ///
    /// Element `i` is `start + i * stride` (no accumulated rounding); a negative `stride`
    /// counts down. An empty range gives shape `[0]`.
    ///
    /// ```swift
    /// MLTensor(rangeFrom: 0, to: 1, by: 0.25)   // [0, 0.25, 0.5, 0.75]
    /// ```
    ///
    /// - Precondition: `stride` is non-zero and finite.
    public init(rangeFrom start: Float, to end: Float, by stride: Float.Stride) {
        self.init(rangeFrom: start, to: end, by: stride, scalarType: Float.self)
    }

    /// Creates a one-dimensional tensor of `Scalar` values from `start` up to, not including,
    /// `end`, stepping by `stride`.
    ///
    /// ```swift
    /// MLTensor(rangeFrom: Int32(0), to: 10, by: 3, scalarType: Int32.self)   // [0, 3, 6, 9]
    /// ```
    ///
    /// - Precondition: `stride` is non-zero.
    // Double is a Tessera scalar: keep `MLTensor(rangeFrom: 0, to: 1, by: 0.1)` Float, as in Core ML.
    @_disfavoredOverload
    public init<Scalar>(
        rangeFrom start: Scalar, to end: Scalar, by stride: Scalar.Stride, scalarType: Scalar.Type = Scalar.self
    ) where Scalar: MLTensorScalar, Scalar: Strideable {
        guard MLTensor.check(stride != 0, "[rangeFrom] stride must be non-zero (from \(start) to \(end))") else {
            self = .placeholder(shape: [0], type: Scalar.kernelScalarType)
            return
        }
        let values = Array(Swift.stride(from: start, to: end, by: stride))
        self.init(shape: [values.count], scalars: values, scalarType: Scalar.self)
    }

    /// Creates a one-dimensional `Float` tensor of `count` evenly spaced values from `start`
    /// through `end`.
    ///
    /// Element `i` is `start + i * (end - start) / (count - 1)` computed in `Double`; the last
    /// element is exactly `end`.
    ///
    /// ```swift
    /// MLTensor(linearSpaceFrom: 0, through: 1, count: 5)   // [0, 0.25, 0.5, 0.75, 1]
    /// ```
    ///
    /// - Precondition: `count` is positive (a count of 1 gives `[start]`).
    public init(linearSpaceFrom start: Float, through end: Float, count: Int) {
        self.init(linearSpaceFrom: start, through: end, count: count, scalarType: Float.self)
    }

    /// Creates a one-dimensional tensor of `count` evenly spaced `Scalar` values from `start`
    /// through `end`.
    ///
    /// ```swift
    /// MLTensor(linearSpaceFrom: Float16(-1), through: 1, count: 3, scalarType: Float16.self)   // [-1, 0, 1]
    /// ```
    ///
    /// - Precondition: `count` is positive.
    @_disfavoredOverload  // keeps `MLTensor(linearSpaceFrom: 0, through: 1, count: 5)` Float, as in Core ML
    public init<Scalar>(
        linearSpaceFrom start: Scalar, through end: Scalar, count: Int, scalarType: Scalar.Type = Scalar.self
    ) where Scalar: MLTensorScalar, Scalar: BinaryFloatingPoint {
        guard MLTensor.check(count > 0, "[linearSpace] count must be positive, got \(count)") else {
            self = .placeholder(shape: [0], type: Scalar.kernelScalarType)
            return
        }
        let (first, last) = (Double(start), Double(end))
        let step = count > 1 ? (last - first) / Double(count - 1) : 0
        let values = (0..<count).map { i in Scalar(i == count - 1 && count > 1 ? last : first + Double(i) * step) }
        self.init(shape: [count], scalars: values, scalarType: Scalar.self)
    }
}

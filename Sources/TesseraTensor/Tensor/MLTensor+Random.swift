import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// Creates a tensor of samples from a normal distribution.
    ///
    /// Values come from the Philox-4×32-10 counter-based generator (Box–Muller over its
    /// uniforms): element `i` depends only on `seed` and `i`, so a seed gives the same tensor
    /// on every run, machine and thread count (Core ML promises this only per compute device).
    /// Without a seed, a fresh random seed is drawn.
    ///
    /// ```swift
    /// let w = MLTensor(randomNormal: [256, 256], mean: 0, standardDeviation: 0.02, seed: 42,
    ///                  scalarType: Float.self)
    /// ```
    ///
    /// - Parameters:
    ///   - shape: The shape of the result.
    ///   - mean: The distribution's mean.
    ///   - standardDeviation: The distribution's standard deviation.
    ///   - seed: The generator's key; `nil` picks one at random.
    ///   - scalarType: The floating-point scalar type of the result.
    public init<Scalar>(
        randomNormal shape: [Int], mean: Scalar = Scalar.init(0.0), standardDeviation: Scalar = Scalar.init(1.0),
        seed: UInt64? = nil, scalarType: Scalar.Type = Scalar.self
    ) where Scalar: MLTensorScalar, Scalar: BinaryFloatingPoint {
        guard MLTensor.check(shape.allSatisfy { $0 >= 0 }, "[randomNormal] negative dimension in shape \(shape)") else {
            self = .placeholder(shape: shape, type: Scalar.kernelScalarType)
            return
        }
        let count = shape.reduce(1, *)
        let (mu, sigma) = (Double(mean), Double(standardDeviation))
        var values = [Double](repeating: 0, count: count)
        values.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress {
                RandomKernels.normal(seed: seed ?? UInt64.random(in: .min ... .max), count: count, output: base)
            }
        }
        self.init(shape: shape, scalars: values.map { Scalar(mu + sigma * $0) }, scalarType: Scalar.self)
    }

    /// Creates a tensor of floating-point samples uniform in a half-open range.
    ///
    /// Same generator and reproducibility as ``init(randomNormal:mean:standardDeviation:seed:scalarType:)``;
    /// values never reach `bounds.upperBound`.
    ///
    /// ```swift
    /// let noise = MLTensor(randomUniform: [4], in: -1..<1, seed: 7, scalarType: Float.self)
    /// ```
    ///
    /// - Parameters:
    ///   - shape: The shape of the result.
    ///   - bounds: The half-open range of the values.
    ///   - seed: The generator's key; `nil` picks one at random.
    ///   - scalarType: The floating-point scalar type of the result.
    /// - Precondition: `bounds` is not empty.
    public init<Scalar>(
        randomUniform shape: [Int], in bounds: Range<Scalar> = 0..<1, seed: UInt64? = nil,
        scalarType: Scalar.Type = Scalar.self
    ) where Scalar: MLTensorScalar, Scalar: BinaryFloatingPoint {
        guard MLTensor.check(shape.allSatisfy { $0 >= 0 }, "[randomUniform] negative dimension in shape \(shape)"),
            MLTensor.check(!bounds.isEmpty, "[randomUniform] empty range \(bounds) for shape \(shape)")
        else {
            self = .placeholder(shape: shape, type: Scalar.kernelScalarType)
            return
        }
        let count = shape.reduce(1, *)
        var values = [Double](repeating: 0, count: count)
        values.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress {
                RandomKernels.uniform(
                    seed: seed ?? UInt64.random(in: .min ... .max), count: count,
                    bits: Scalar.self == Double.self ? 53 : 24, output: base)
            }
        }
        let (low, high) = (Double(bounds.lowerBound), Double(bounds.upperBound))
        let scalars = values.map { u -> Scalar in
            let value = Scalar(low + (high - low) * u)
            return value < bounds.upperBound ? value : bounds.upperBound.nextDown
        }
        self.init(shape: shape, scalars: scalars, scalarType: Scalar.self)
    }

    /// Creates a tensor of integers uniform in a closed range.
    ///
    /// Same generator and reproducibility as the floating-point initializers.
    ///
    /// ```swift
    /// let tokens = MLTensor(randomUniform: [8], in: 0...31_999, seed: 1, scalarType: Int32.self)
    /// ```
    ///
    /// - Parameters:
    ///   - shape: The shape of the result.
    ///   - bounds: The closed range of the values.
    ///   - seed: The generator's key; `nil` picks one at random.
    ///   - scalarType: The integer scalar type of the result.
    public init<Scalar>(
        randomUniform shape: [Int], in bounds: ClosedRange<Scalar> = 0...1, seed: UInt64? = nil,
        scalarType: Scalar.Type = Scalar.self
    ) where Scalar: MLTensorScalar, Scalar: BinaryInteger {
        guard MLTensor.check(shape.allSatisfy { $0 >= 0 }, "[randomUniform] negative dimension in shape \(shape)")
        else {
            self = .placeholder(shape: shape, type: Scalar.kernelScalarType)
            return
        }
        let count = shape.reduce(1, *)
        var values = [Int64](repeating: 0, count: count)
        values.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress {
                RandomKernels.integers(
                    seed: seed ?? UInt64.random(in: .min ... .max), count: count, lower: Int64(bounds.lowerBound),
                    upper: Int64(bounds.upperBound), output: base)
            }
        }
        self.init(shape: shape, scalars: values.map { Scalar(truncatingIfNeeded: $0) }, scalarType: Scalar.self)
    }
}

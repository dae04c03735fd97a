import TesseraGraph
import TesseraKernels

extension MLTensor {
    /// How ``MLTensor/padded(forSizes:mode:)`` fills the new elements.
    public enum PaddingMode: Sendable {
        /// A constant value, converted to the tensor's scalar type.
        case constant(Float)
        /// Mirror without repeating the edge: `[1, 2, 3]` padded by 2 → `[3, 2, 1, 2, 3, 2, 1]`.
        case reflection
        /// Mirror repeating the edge: `[1, 2, 3]` padded by 2 → `[2, 1, 1, 2, 3, 3, 2]`.
        case symmetric
    }

    /// How ``MLTensor/resized(to:method:)`` computes the new pixels.
    public enum ResizeMethod: Sendable {
        /// Bilinear interpolation. With `alignCorners` the corner pixels of the input and the
        /// output line up (`src = dst * (in - 1) / (out - 1)`); without, pixel centres do
        /// (`src = (dst + 0.5) * in / out - 0.5`), as in PyTorch's `interpolate`.
        case bilinear(alignCorners: Bool)
        /// The nearest pixel: source index `min(floor(dst * in / out), in - 1)` (PyTorch's
        /// `nearest`).
        case nearestNeighbor
    }

    /// Returns the tensor padded along every dimension.
    ///
    /// ```swift
    /// let x = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
    /// x.padded(forSizes: [(0, 0), (2, 2)], mode: .constant(0))   // [[0, 0, 1, 2, 3, 0, 0], ...]
    /// x.padded(forSizes: [(0, 0), (2, 2)], mode: .reflection)    // [[3, 2, 1, 2, 3, 2, 1], ...]
    /// x.padded(forSizes: [(0, 0), (2, 2)], mode: .symmetric)     // [[2, 1, 1, 2, 3, 3, 2], ...]
    /// ```
    ///
    /// - Parameters:
    ///   - sizes: Elements to add before and after, one pair per dimension.
    ///   - mode: How the new elements are chosen.
    /// - Precondition: One non-negative pair per dimension; reflection pads less than the
    ///   dimension's size, symmetric at most its size.
    public func padded(forSizes sizes: [(before: Int, after: Int)], mode: PaddingMode) -> MLTensor {
        guard
            MLTensor.check(
                sizes.count == rank, "[padded] \(sizes.count) (before, after) pairs for a tensor of shape \(shape)")
        else { return placeholder }
        for (axis, pair) in sizes.enumerated() {
            guard
                MLTensor.check(
                    pair.before >= 0 && pair.after >= 0,
                    "[padded] negative padding (\(pair.before), \(pair.after)) on axis \(axis) of shape \(shape)")
            else { return placeholder }
            let widest = Swift.max(pair.before, pair.after)
            switch mode {
            case .constant: break
            case .reflection:
                guard
                    MLTensor.check(
                        widest == 0 || widest < shape[axis],
                        "[padded] reflection padding \(widest) must be less than axis \(axis) of shape \(shape)")
                else { return placeholder }
            case .symmetric:
                guard
                    MLTensor.check(
                        widest <= shape[axis],
                        "[padded] symmetric padding \(widest) must be at most axis \(axis) of shape \(shape)")
                else { return placeholder }
            }
        }
        let graphMode: GraphPadMode
        switch mode {
        case .constant(let value): graphMode = .constant(Double(value))
        case .reflection: graphMode = .reflect
        case .symmetric: graphMode = .symmetric
        }
        return MLTensor(.pad(before: sizes.map(\.before), after: sizes.map(\.after), mode: graphMode), [self])
    }

    /// Returns the tensor padded along every dimension with a constant.
    ///
    /// ```swift
    /// MLTensor([1, 2] as [Float]).padded(forSizes: [(1, 2)], with: 9)   // [9, 1, 2, 9, 9]
    /// ```
    ///
    /// - Precondition: One non-negative pair per dimension.
    public func padded(forSizes sizes: [(before: Int, after: Int)], with value: Float) -> MLTensor {
        padded(forSizes: sizes, mode: .constant(value))
    }

    /// Returns an image tensor resized to a new height and width.
    ///
    /// The tensor is `[batch, channels, height, width]` or `[channels, height, width]`; the
    /// last two dimensions are resized, as PyTorch's `interpolate` does (float16 is computed in
    /// float32).
    ///
    /// ```swift
    /// let image = MLTensor(zeros: [1, 3, 224, 224], scalarType: Float.self)
    /// image.resized(to: (newHeight: 112, newWidth: 112), method: .bilinear(alignCorners: false)).shape
    /// // [1, 3, 112, 112]
    /// ```
    ///
    /// - Precondition: Rank 3 or 4, a floating-point scalar type, and a positive size.
    public func resized(to size: (newHeight: Int, newWidth: Int), method: ResizeMethod = .nearestNeighbor)
        -> MLTensor
    {
        guard MLTensor.check(rank == 3 || rank == 4, "[resized] needs a tensor of rank 3 or 4, got shape \(shape)"),
            MLTensor.check(
                kernelType.isFloatingPoint, "[resized] needs a floating-point tensor, got \(kernelType) \(shape)"),
            MLTensor.check(
                size.newHeight > 0 && size.newWidth > 0,
                "[resized] size (\(size.newHeight), \(size.newWidth)) must be positive (shape \(shape))")
        else { return placeholder }
        let kernelMethod: ResizeKernelMethod
        switch method {
        case .bilinear(let alignCorners): kernelMethod = .bilinear(alignCorners: alignCorners)
        case .nearestNeighbor: kernelMethod = .nearest
        }
        let op = GraphOp.resize(height: size.newHeight, width: size.newWidth, method: kernelMethod)
        if kernelType == .float16 {
            return MLTensor(op, [cast(to: Float.self)]).cast(to: Float16.self)
        }
        return MLTensor(op, [self])
    }
}

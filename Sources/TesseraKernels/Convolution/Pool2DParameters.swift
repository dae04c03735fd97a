/// The geometry of a 2-D pooling window: kernel, strides, padding, dilation and rounding.
///
/// Output size along an axis is
/// `(in + padBefore + padAfter - dilation·(kernel-1) - 1) / stride + 1`, rounded down, or up
/// when `ceilMode` is set — in which case, as in PyTorch, a last window that would start
/// inside the trailing padding is dropped.
///
/// ```swift
/// // ResNet's stem max pool: 3×3, stride 2, padding 1
/// let p = Pool2DParameters(kernel: (3, 3), strides: (2, 2), padding: (top: 1, bottom: 1, left: 1, right: 1))
/// p.outputShape(inputShape: [1, 64, 112, 112])   // [1, 64, 56, 56]
/// ```
public struct Pool2DParameters: Sendable, Hashable, CustomStringConvertible {
    /// Window rows.
    public var kernelHeight: Int
    /// Window columns.
    public var kernelWidth: Int
    /// Step between windows, in input rows.
    public var strideHeight: Int
    /// Step between windows, in input columns.
    public var strideWidth: Int
    /// Spacing between window taps in rows (max pooling only; average pooling requires 1).
    public var dilationHeight: Int
    /// Spacing between window taps in columns (max pooling only; average pooling requires 1).
    public var dilationWidth: Int
    /// Padding rows above the input.
    public var padTop: Int
    /// Padding rows below the input.
    public var padBottom: Int
    /// Padding columns left of the input.
    public var padLeft: Int
    /// Padding columns right of the input.
    public var padRight: Int
    /// Whether output sizes round up instead of down.
    public var ceilMode: Bool

    /// Pooling parameters; `strides` default to the kernel size, as in PyTorch.
    ///
    /// ```swift
    /// let p = Pool2DParameters(kernel: (2, 2))   // 2×2 windows, stride 2
    /// ```
    public init(
        kernel: (height: Int, width: Int), strides: (height: Int, width: Int)? = nil,
        padding: (top: Int, bottom: Int, left: Int, right: Int) = (0, 0, 0, 0),
        dilations: (height: Int, width: Int) = (1, 1), ceilMode: Bool = false
    ) {
        kernelHeight = kernel.height
        kernelWidth = kernel.width
        strideHeight = strides?.height ?? kernel.height
        strideWidth = strides?.width ?? kernel.width
        dilationHeight = dilations.height
        dilationWidth = dilations.width
        padTop = padding.top
        padBottom = padding.bottom
        padLeft = padding.left
        padRight = padding.right
        self.ceilMode = ceilMode
    }

    /// The `[N, C, oH, oW]` output shape for an `[N, C, H, W]` input.
    ///
    /// ```swift
    /// Pool2DParameters(kernel: (3, 3), strides: (2, 2), ceilMode: true).outputShape(inputShape: [1, 1, 6, 6])
    /// // [1, 1, 3, 3]   (floor mode gives [1, 1, 2, 2])
    /// ```
    ///
    /// - Precondition: The input has rank 4 with no negative size; kernel, strides and
    ///   dilations are positive; padding is non-negative; the dilated window fits in the
    ///   padded input.
    public func outputShape(inputShape: [Int]) -> [Int] {
        do { return try checkedOutputShape(inputShape: inputShape) } catch { kernelFailure(error.message) }
    }

    /// ``outputShape(inputShape:)``, or an ``OpError`` naming what does not fit (the same
    /// messages its trap prints).
    package func checkedOutputShape(inputShape: [Int]) throws(OpError) -> [Int] {
        try OpError.require(inputShape.count == 4, "[pool2d] input \(inputShape) must have rank 4 (NCHW)")
        try OpError.require(inputShape.allSatisfy { $0 >= 0 }, "[pool2d] negative size in input \(inputShape)")
        try OpError.require(
            kernelHeight >= 1 && kernelWidth >= 1 && strideHeight >= 1 && strideWidth >= 1 && dilationHeight >= 1
                && dilationWidth >= 1,
            "[pool2d] kernel, strides and dilations must be positive: \(self)")
        try OpError.require(
            padTop >= 0 && padBottom >= 0 && padLeft >= 0 && padRight >= 0,
            "[pool2d] padding must be non-negative: \(self)")
        let oh = Pool2DParameters.outputSize(
            inputShape[2], kernel: kernelHeight, stride: strideHeight, dilation: dilationHeight, padBefore: padTop,
            padAfter: padBottom, ceilMode: ceilMode)
        let ow = Pool2DParameters.outputSize(
            inputShape[3], kernel: kernelWidth, stride: strideWidth, dilation: dilationWidth, padBefore: padLeft,
            padAfter: padRight, ceilMode: ceilMode)
        try OpError.require(oh >= 1 && ow >= 1, "[pool2d] window does not fit in padded input \(inputShape) (\(self))")
        return [inputShape[0], inputShape[1], oh, ow]
    }

    /// PyTorch's pooling output size along one axis.
    static func outputSize(
        _ size: Int, kernel: Int, stride: Int, dilation: Int, padBefore: Int, padAfter: Int, ceilMode: Bool
    ) -> Int {
        let span = size + padBefore + padAfter - dilation * (kernel - 1) - 1
        if span < 0 { return 0 }
        var count = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1
        // A ceil-mode window must start inside the input or the leading padding.
        if ceilMode && (count - 1) * stride >= size + padBefore { count -= 1 }
        return count
    }

    /// The parameters in words, for trap messages.
    public var description: String {
        "kernel (\(kernelHeight), \(kernelWidth)), strides (\(strideHeight), \(strideWidth)), "
            + "dilations (\(dilationHeight), \(dilationWidth)), "
            + "padding (t \(padTop), b \(padBottom), l \(padLeft), r \(padRight)), ceilMode \(ceilMode)"
    }
}

/// The geometry of a 2-D convolution: strides, dilations, zero padding and groups.
///
/// Output size along an axis is `(in + padBefore + padAfter - dilation·(kernel-1) - 1) / stride + 1`
/// (integer division), the PyTorch / ONNX rule.
///
/// ```swift
/// // ResNet's 3×3 "same" convolution
/// let p = Conv2DParameters(padding: (top: 1, bottom: 1, left: 1, right: 1))
/// p.outputShape(inputShape: [1, 64, 56, 56], weightShape: [64, 64, 3, 3])   // [1, 64, 56, 56]
/// ```
public struct Conv2DParameters: Sendable, Hashable, CustomStringConvertible {
    /// Step between neighbouring output positions, in input rows.
    public var strideHeight: Int
    /// Step between neighbouring output positions, in input columns.
    public var strideWidth: Int
    /// Spacing between kernel taps, in input rows (1 = dense kernel).
    public var dilationHeight: Int
    /// Spacing between kernel taps, in input columns.
    public var dilationWidth: Int
    /// Zero rows added above the input.
    public var padTop: Int
    /// Zero rows added below the input.
    public var padBottom: Int
    /// Zero columns added left of the input.
    public var padLeft: Int
    /// Zero columns added right of the input.
    public var padRight: Int
    /// Channel groups: input and output channels split into `groups` independent convolutions.
    public var groups: Int

    /// Parameters with the given geometry; the defaults describe a dense, unpadded,
    /// stride-1 convolution.
    ///
    /// ```swift
    /// let strided = Conv2DParameters(strides: (2, 2), padding: (top: 3, bottom: 3, left: 3, right: 3))
    /// ```
    public init(
        strides: (height: Int, width: Int) = (1, 1), dilations: (height: Int, width: Int) = (1, 1),
        padding: (top: Int, bottom: Int, left: Int, right: Int) = (0, 0, 0, 0), groups: Int = 1
    ) {
        strideHeight = strides.height
        strideWidth = strides.width
        dilationHeight = dilations.height
        dilationWidth = dilations.width
        padTop = padding.top
        padBottom = padding.bottom
        padLeft = padding.left
        padRight = padding.right
        self.groups = groups
    }

    /// The `[N, O, oH, oW]` output shape for an `[N, C, H, W]` input and an
    /// `[O, C/groups, kH, kW]` weight.
    ///
    /// ```swift
    /// Conv2DParameters(strides: (2, 2)).outputShape(inputShape: [1, 3, 7, 7], weightShape: [8, 3, 3, 3])
    /// // [1, 8, 3, 3]
    /// ```
    ///
    /// - Precondition: Both shapes have rank 4 and no negative size; strides, dilations and
    ///   groups are positive and padding is non-negative; `groups` divides `C` and `O`;
    ///   the weight has `C/groups` input channels; the dilated kernel fits in the padded
    ///   input (at least one output position per axis).
    public func outputShape(inputShape: [Int], weightShape: [Int]) -> [Int] {
        do { return try checkedOutputShape(inputShape: inputShape, weightShape: weightShape) } catch {
            kernelFailure(error.message)
        }
    }

    /// ``outputShape(inputShape:weightShape:)``, or an ``OpError`` naming what does not fit
    /// (the same messages its trap prints).
    package func checkedOutputShape(inputShape: [Int], weightShape: [Int]) throws(OpError) -> [Int] {
        try OpError.require(
            inputShape.count == 4 && weightShape.count == 4,
            "[conv2d] input \(inputShape) and weight \(weightShape) must both have rank 4 (NCHW, OIHW)")
        try OpError.require(
            strideHeight >= 1 && strideWidth >= 1 && dilationHeight >= 1 && dilationWidth >= 1 && groups >= 1,
            "[conv2d] strides, dilations and groups must be positive: \(self)")
        try OpError.require(
            padTop >= 0 && padBottom >= 0 && padLeft >= 0 && padRight >= 0,
            "[conv2d] padding must be non-negative: \(self)")
        let (n, c, h, w) = (inputShape[0], inputShape[1], inputShape[2], inputShape[3])
        let (o, cg, kh, kw) = (weightShape[0], weightShape[1], weightShape[2], weightShape[3])
        try OpError.require(
            n >= 0 && c >= 1 && h >= 0 && w >= 0 && o >= 0 && kh >= 1 && kw >= 1,
            "[conv2d] invalid sizes: input \(inputShape), weight \(weightShape)")
        try OpError.require(
            c % groups == 0 && o % groups == 0,
            "[conv2d] groups \(groups) must divide input channels \(c) and output channels \(o)")
        try OpError.require(
            cg == c / groups,
            "[conv2d] weight \(weightShape) expects \(cg) input channels per group, input \(inputShape) with \(groups) groups has \(c / groups)"
        )
        let spanH = h + padTop + padBottom - dilationHeight * (kh - 1) - 1
        let spanW = w + padLeft + padRight - dilationWidth * (kw - 1) - 1
        try OpError.require(
            spanH >= 0 && spanW >= 0,
            "[conv2d] dilated kernel \(weightShape) does not fit in padded input \(inputShape) (\(self))")
        return [n, o, spanH / strideHeight + 1, spanW / strideWidth + 1]
    }

    /// Whether the convolution reads each input pixel exactly once per output pixel at the
    /// same position, so it is a plain matrix product (1×1 kernel, stride 1, no padding).
    func isPointwise(kernelHeight: Int, kernelWidth: Int) -> Bool {
        kernelHeight == 1 && kernelWidth == 1 && strideHeight == 1 && strideWidth == 1 && padTop == 0
            && padBottom == 0 && padLeft == 0 && padRight == 0
    }

    /// The parameters in words, for trap messages.
    public var description: String {
        "strides (\(strideHeight), \(strideWidth)), dilations (\(dilationHeight), \(dilationWidth)), "
            + "padding (t \(padTop), b \(padBottom), l \(padLeft), r \(padRight)), groups \(groups)"
    }
}

import TesseraCoreVideo
import TesseraImaging
import TesseraMultiArray
import TesseraTensor

/// Core ML's conversions between pixel buffers and the tensors of a model's image features.
///
/// An image input becomes a float tensor of shape `[1, C, H, W]` (or `[C, H, W]` for a rank-3
/// input) holding `pixel * scale + bias[channel]`, channels in the feature's order (R, G, B; B,
/// G, R; or one gray channel), pixel values 0…255. ML programs converted by coremltools apply
/// their scale and bias inside the program (their first ops are `mul` and `add`), so they are fed
/// with `scale` 1 and no bias; a NeuralNetwork model's `preprocessing` scaler gives its own.
/// An image output is the reverse with no scale: the last two dimensions are height and width,
/// 8-bit formats clamp to 0…255 and round to nearest.
package enum ImagePreprocessing {
    /// The tensor a pixel buffer feeds to an image input.
    ///
    /// ```swift
    /// let x = try ImagePreprocessing.tensor(from: buffer, layout: .bgr, scale: 1 / 255, bias: [-0.5, -0.5, -0.5])
    /// x.shape     // [1, 3, H, W]
    /// ```
    ///
    /// - Parameters:
    ///   - layout: The feature's channel layout.
    ///   - scale: Multiplies every pixel value.
    ///   - bias: Added per channel after scaling; empty for none, else one per channel.
    ///   - scalarType: `Float` (the default) or `Float16`.
    ///   - rank: 4 for `[1, C, H, W]`, 3 for `[C, H, W]`.
    /// - Throws: ``MLModelError`` `.featureType` for a pixel format Tessera does not read.
    package static func tensor(
        from buffer: CVPixelBuffer, layout: ImageColorLayout, scale: Float = 1, bias: [Float] = [],
        scalarType: any MLTensorScalar.Type = Float.self, rank: Int = 4
    ) throws(MLModelError) -> MLTensor {
        let values = try MLFeatureValue.convert { () throws(ImageError) in
            try PlanarImage.values(of: buffer, layout: layout, scale: scale, bias: bias)
        }
        let planar = [layout.channelCount, buffer.height, buffer.width]
        let tensor = MLTensor(MLShapedArray<Float>(scalars: values, shape: rank == 3 ? planar : [1] + planar))
        return ObjectIdentifier(scalarType) == ObjectIdentifier(Float.self) ? tensor : tensor.cast(to: scalarType)
    }

    /// The pixel buffer of an image output from a computed tensor whose last two dimensions are
    /// height and width.
    ///
    /// - Throws: ``MLModelError`` `.generic` when the tensor's shape does not hold the layout's
    ///   channels.
    package static func pixelBuffer(from tensor: MLTensor, layout: ImageColorLayout, name: String) throws(MLModelError)
        -> CVPixelBuffer
    {
        let shape = tensor.shape
        let height = shape.count >= 2 ? shape[shape.count - 2] : 0
        let width = shape.last ?? 0
        guard shape.count >= 2, height > 0, width > 0, tensor.scalarCount == layout.channelCount * height * width
        else {
            throw MLModelError(
                .generic,
                "output \"\(name)\" is an image of \(layout.channelCount) channels, but the program produced shape "
                    + "\(shape)")
        }
        let scalars = MLShapedArray<Float>(tensor.multiArray(dataType: .float32)).scalars
        return try MLFeatureValue.convert { () throws(ImageError) in
            try scalars.withUnsafeBufferPointer { values throws(ImageError) in
                try PlanarImage.pixelBuffer(from: values, width: width, height: height, layout: layout)
            }
        }
    }
}

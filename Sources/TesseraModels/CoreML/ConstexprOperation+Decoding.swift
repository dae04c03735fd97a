import TesseraKernels

extension ConstexprOperation {
    /// iOS16 `constexpr_affine_dequantize`: `(quantized_data − zero_point) · scale`, where
    /// `zero_point` and `scale` are scalars or vectors along `axis`.
    func affineDequantize() throws -> DenseConstant {
        let data = try tensor("quantized_data")
        let zeroPoint = try tensor("zero_point")
        let scale = try tensor("scale")
        guard data.isInteger else { throw error("quantized_data must be integers, not \(data.dataType)") }
        let rank = data.shape.count
        guard let rawAxis = try optionalInteger("axis") else { throw error("has no argument \"axis\"") }
        guard rank > 0, (-rank..<rank).contains(rawAxis) else {
            throw error("axis \(rawAxis) is out of range for quantized_data of rank \(rank)")
        }
        let axis = rawAxis < 0 ? rawAxis + rank : rawAxis
        let channels = data.shape[axis]
        for (name, parameter) in [("zero_point", zeroPoint), ("scale", scale)] {
            guard parameter.shape.count <= 1, parameter.values.count == 1 || parameter.values.count == channels else {
                throw error(
                    "\(name) has shape \(parameter.shape); it must be a scalar or have \(channels) elements "
                        + "(quantized_data \(data.shape) along axis \(axis))")
            }
        }
        let inner = data.shape[(axis + 1)...].reduce(1, *)
        let roundToHalf = scale.dataType == .float16
        var values = [Float](repeating: 0, count: data.values.count)
        for index in values.indices {
            let channel = channels == 0 ? 0 : (index / inner) % channels
            let z = zeroPoint.values[zeroPoint.values.count == 1 ? 0 : channel]
            let s = scale.values[scale.values.count == 1 ? 0 : channel]
            let value = (data.values[index] - z) * s
            values[index] = roundToHalf ? Float(Float16(value)) : value
        }
        return DenseConstant(shape: data.shape, values: values)
    }

    /// iOS16 `constexpr_cast`: fp16 `source_val` widened to `output_dtype` (`fp32`).
    func cast() throws -> DenseConstant {
        let source = try tensor("source_val")
        let target = try string("output_dtype")
        guard source.dataType == .float16 else { throw error("source_val must be fp16, not \(source.dataType)") }
        guard target == "fp32" || target == "fp16" else {
            throw error("output_dtype \"\(target)\" is not supported (expected \"fp32\")")
        }
        return DenseConstant(shape: source.shape, values: source.values)
    }

    /// iOS16 `constexpr_lut_to_dense`: a flat `lut` of `2ⁿ` entries, `indices` as a uint8
    /// vector of n-bit codes packed LSB first, and the output `shape`.
    func lutToDenseIOS16() throws -> DenseConstant {
        let lut = try tensor("lut")
        let indices = try tensor("indices")
        let shape = try shape("shape")
        guard lut.shape.count == 1 else { throw error("lut must be a vector, not shape \(lut.shape)") }
        let paletteSize = lut.values.count
        guard let bits = [1, 2, 4, 6, 8].first(where: { 1 << $0 == paletteSize }) else {
            throw error("lut has \(paletteSize) entries; it must have 2, 4, 16, 64 or 256 (1, 2, 4, 6 or 8 bits)")
        }
        let count = shape.checkedElementCount!
        let packed = try packedBytes(indices, name: "indices")
        let (totalBits, overflow) = count.multipliedReportingOverflow(by: bits)
        let needed = overflow ? Int.max : (totalBits + 7) / 8
        guard packed.count == needed else {
            throw error(
                "indices has \(packed.count) bytes, but \(count) elements of \(bits) bits (shape \(shape)) need \(needed)"
            )
        }
        let codes = packed.withUnsafeBytes { Self.unpackBits($0, bitWidth: bits, count: count) }
        return DenseConstant(shape: shape, values: codes.map { lut.values[Int($0)] })
    }

    /// iOS18 `constexpr_lut_to_dense`: `indices` in the dense shape (uint1…uint8), and a
    /// `lut` of rank `indices.rank + 2`: one palette of `2ⁿ` vectors per block, blocks
    /// tiling `indices`; vectors longer than 1 are laid out along `vector_axis`.
    func lutToDenseIOS18() throws -> DenseConstant {
        try lutToDense(indices: tensor("indices"), lut: tensor("lut"))
    }

    /// ``lutToDenseIOS18()`` on given `indices` and `lut` (the sparse form densifies its
    /// indices first).
    private func lutToDense(indices: ConstexprTensor, lut: ConstexprTensor) throws -> DenseConstant {
        guard let bits = indices.dataType.bitWidth, indices.isInteger, bits <= 8 else {
            throw error("indices must be uint1…uint8, not \(indices.dataType)")
        }
        let rank = indices.shape.count
        guard lut.shape.count == rank + 2 else {
            throw error(
                "lut has shape \(lut.shape); for indices of shape \(indices.shape) its rank must be \(rank + 2)")
        }
        let paletteSize = lut.shape[rank]
        let vectorSize = lut.shape[rank + 1]
        guard paletteSize == 1 << bits else {
            throw error("lut has \(paletteSize) entries per palette, but \(bits)-bit indices need \(1 << bits)")
        }
        var blockSizes: [Int] = []
        for axis in 0..<rank {
            let blocks = lut.shape[axis]
            guard blocks > 0, indices.shape[axis] % blocks == 0 else {
                throw error(
                    "lut's \(blocks) blocks along axis \(axis) do not divide indices' size \(indices.shape[axis])")
            }
            blockSizes.append(indices.shape[axis] / blocks)
        }
        var vectorAxis = rank - 1
        var outputShape = indices.shape
        if vectorSize > 1 {
            guard let raw = try optionalInteger("vector_axis") else {
                throw error("has vectors of \(vectorSize) entries but no vector_axis")
            }
            guard (-rank..<rank).contains(raw) else {
                throw error("vector_axis \(raw) is out of range for indices of rank \(rank)")
            }
            vectorAxis = raw < 0 ? raw + rank : raw
            guard (outputShape.enumerated().map { $0 == vectorAxis ? $1 * vectorSize : $1 }).checkedElementCount != nil
            else { throw error("output shape overflows") }
            outputShape[vectorAxis] *= vectorSize
        }
        let count = outputShape.checkedElementCount!
        let indexStrides = Self.strides(indices.shape)
        let lutStrides = Self.strides(lut.shape)
        let outputStrides = Self.strides(outputShape)
        var values = [Float](repeating: 0, count: count)
        for position in 0..<count {
            var indexOffset = 0
            var lutOffset = 0
            var vectorOffset = 0
            var remainder = position
            for axis in 0..<rank {
                var coordinate = remainder / outputStrides[axis]
                remainder %= outputStrides[axis]
                if axis == vectorAxis, vectorSize > 1 {
                    vectorOffset = coordinate % vectorSize
                    coordinate /= vectorSize
                }
                indexOffset += coordinate * indexStrides[axis]
                lutOffset += (coordinate / blockSizes[axis]) * lutStrides[axis]
            }
            let code = Int(indices.values[indexOffset])
            guard code >= 0, code < paletteSize else {
                throw error("index \(code) at element \(indexOffset) is outside the \(paletteSize)-entry palette")
            }
            values[position] = lut.values[lutOffset + code * vectorSize + vectorOffset]
        }
        return DenseConstant(shape: outputShape, values: values)
    }

    /// iOS16 `constexpr_sparse_to_dense`: `mask` bits (uint8, LSB first) over the flat
    /// output `shape`; set bits take `nonzero_data` in order, the rest are zero.
    func sparseToDenseIOS16() throws -> DenseConstant {
        let data = try tensor("nonzero_data")
        let mask = try tensor("mask")
        let shape = try shape("shape")
        let count = shape.checkedElementCount!
        let packed = try packedBytes(mask, name: "mask")
        guard packed.count == (count + 7) / 8 else {
            throw error(
                "mask has \(packed.count) bytes, but \(count) elements (shape \(shape)) need \((count + 7) / 8)")
        }
        let bits = packed.withUnsafeBytes { Self.unpackBits($0, bitWidth: 1, count: count) }
        return DenseConstant(shape: shape, values: try scatter(data, into: bits.lazy.map { $0 != 0 }, count: count))
    }

    /// iOS18 `constexpr_sparse_to_dense`: a uint1 `mask` in the output's shape.
    func sparseToDenseIOS18() throws -> DenseConstant {
        let data = try tensor("nonzero_data")
        let mask = try tensor("mask")
        // A chained mask (from constexpr_lut_to_sparse or constexpr_sparse_blockwise_shift_scale)
        // arrives decoded, as float32 zeros and ones.
        guard [.uint1, .bool, .uint8, .float32].contains(mask.dataType) else {
            throw error("mask must be uint1, not \(mask.dataType)")
        }
        let values = try scatter(data, into: mask.values.lazy.map { $0 != 0 }, count: mask.values.count)
        return DenseConstant(shape: mask.shape, values: values)
    }

    /// iOS18 `constexpr_blockwise_shift_scale`: `(data − offset) · scale`, where `scale` and
    /// `offset` have `data`'s rank and each of their elements covers one block of `data`.
    func blockwiseShiftScale() throws -> DenseConstant {
        try shiftScale(data: tensor("data"), scale: tensor("scale"), offset: optionalTensor("offset"))
    }

    /// ``blockwiseShiftScale()`` on given arguments (the sparse form densifies its data first).
    private func shiftScale(data: ConstexprTensor, scale: ConstexprTensor, offset: ConstexprTensor?) throws
        -> DenseConstant
    {
        let rank = data.shape.count
        guard scale.shape.count == rank else {
            throw error("scale has shape \(scale.shape); it must have data's rank \(rank) (data \(data.shape))")
        }
        if let offset, offset.shape != scale.shape {
            throw error("offset has shape \(offset.shape); it must match scale's \(scale.shape)")
        }
        var blockSizes: [Int] = []
        for axis in 0..<rank {
            guard scale.shape[axis] > 0, data.shape[axis] % scale.shape[axis] == 0 else {
                throw error(
                    "scale's \(scale.shape[axis]) blocks along axis \(axis) do not divide data's size \(data.shape[axis])"
                )
            }
            blockSizes.append(data.shape[axis] / scale.shape[axis])
        }
        let dataStrides = Self.strides(data.shape)
        let scaleStrides = Self.strides(scale.shape)
        let roundToHalf = scale.dataType == .float16
        var values = [Float](repeating: 0, count: data.values.count)
        for position in values.indices {
            var scaleOffset = 0
            var remainder = position
            for axis in 0..<rank {
                let coordinate = remainder / dataStrides[axis]
                remainder %= dataStrides[axis]
                scaleOffset += (coordinate / blockSizes[axis]) * scaleStrides[axis]
            }
            var shifted = data.values[position] - (offset?.values[scaleOffset] ?? 0)
            if roundToHalf { shifted = Float(Float16(shifted)) }
            let value = shifted * scale.values[scaleOffset]
            values[position] = roundToHalf ? Float(Float16(value)) : value
        }
        return DenseConstant(shape: data.shape, values: values)
    }

    /// iOS18 `constexpr_lut_to_sparse`: palettizes only the set positions of `indices_mask`.
    /// Returns the mask (repeated `VECTOR_SIZE` times along `vector_axis` for vector palettes)
    /// and the values at its set positions, row-major: what `constexpr_sparse_to_dense`
    /// takes.
    func lutToSparse() throws -> (mask: DenseConstant, nonzeroData: DenseConstant) {
        let mask = try tensor("indices_mask")
        let data = try tensor("indices_nonzero_data")
        let lut = try tensor("lut")
        let dense = try scatter(data, into: mask.values.lazy.map { $0 != 0 }, count: mask.values.count)
        let indices = ConstexprTensor(dataType: data.dataType, shape: mask.shape, values: dense)
        let palettized = try lutToDense(indices: indices, lut: lut)
        var expandedMask = mask.values
        if palettized.shape != mask.shape,
            let axis = palettized.shape.indices.first(where: {
                palettized.shape[$0] != mask.shape[$0]
            })
        {
            // Each mask element covers `vectorSize` consecutive positions along the vector axis.
            let vectorSize = palettized.shape[axis] / mask.shape[axis]
            let outer = mask.shape[..<axis].reduce(1, *)
            let inner = mask.shape[(axis + 1)...].reduce(1, *)
            expandedMask = []
            expandedMask.reserveCapacity(palettized.values.count)
            for o in 0..<outer {
                for a in 0..<mask.shape[axis] {
                    let row = mask.values[
                        ((o * mask.shape[axis]) + a) * inner..<((o * mask.shape[axis]) + a + 1) * inner]
                    for _ in 0..<vectorSize { expandedMask += row }
                }
            }
        }
        return gathered(palettized, mask: expandedMask)
    }

    /// iOS18 `constexpr_sparse_blockwise_shift_scale`: `(data − offset) · scale` on the set
    /// positions of `data_mask` only. Returns the mask and the dequantized values at its set
    /// positions, row-major.
    func sparseBlockwiseShiftScale() throws -> (mask: DenseConstant, nonzeroData: DenseConstant) {
        let mask = try tensor("data_mask")
        let data = try tensor("nonzero_data")
        let dense = try scatter(data, into: mask.values.lazy.map { $0 != 0 }, count: mask.values.count)
        let result = try shiftScale(
            data: ConstexprTensor(dataType: data.dataType, shape: mask.shape, values: dense),
            scale: tensor("scale"), offset: optionalTensor("offset"))
        return gathered(result, mask: mask.values)
    }

    // MARK: - Helpers

    /// `mask` (in `dense`'s shape) and `dense`'s values where it is set, in order.
    private func gathered(_ dense: DenseConstant, mask: [Float]) -> (mask: DenseConstant, nonzeroData: DenseConstant) {
        let values = zip(dense.values, mask).compactMap { $1 != 0 ? $0 : nil }
        return (DenseConstant(shape: dense.shape, values: mask), DenseConstant(shape: [values.count], values: values))
    }

    /// A uint8 (or int8) vector's bytes, for bit-packed indices and masks.
    private func packedBytes(_ tensor: ConstexprTensor, name: String) throws -> [UInt8] {
        guard tensor.dataType == .uint8 || tensor.dataType == .int8, tensor.shape.count == 1 else {
            throw error("\(name) must be a uint8 vector of packed bits, not \(tensor.dataType)\(tensor.shape)")
        }
        return try tensor.values.map { value in
            // Floats as the tensor's field held them: a float or int64 field can hold anything.
            guard value.isFinite, let byte = Int(exactly: value.rounded(.towardZero)), (-128...255).contains(byte)
            else {
                throw error("\(name) holds \(value), which is not a \(tensor.dataType) value")
            }
            return UInt8(truncatingIfNeeded: byte)
        }
    }

    /// Zeros with the set positions of `mask` filled from `data` in order.
    private func scatter(_ data: ConstexprTensor, into mask: some Sequence<Bool>, count: Int) throws -> [Float] {
        guard data.shape.count == 1 else { throw error("nonzero_data must be a vector, not shape \(data.shape)") }
        var values = [Float](repeating: 0, count: count)
        var next = 0
        for (position, isSet) in mask.enumerated() where isSet {
            guard next < data.values.count else {
                throw error("mask has more set bits than nonzero_data's \(data.values.count) values")
            }
            values[position] = data.values[next]
            next += 1
        }
        guard next == data.values.count else {
            throw error("mask has \(next) set bits but nonzero_data has \(data.values.count) values")
        }
        return values
    }

    /// Row-major strides of `shape`, in elements.
    static func strides(_ shape: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: shape.count)
        var stride = 1
        for axis in shape.indices.reversed() {
            strides[axis] = stride
            stride *= max(shape[axis], 1)
        }
        return strides
    }
}

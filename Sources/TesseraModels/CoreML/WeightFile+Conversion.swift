import TesseraKernels

extension WeightFile {
    /// The blob's elements converted to `Float`, for the types coremltools stores dense
    /// weights in: Float32, Float16, Int8 and UInt8 (integers convert by value; scaling for
    /// quantized weights is the `constexpr_*` op's job).
    ///
    /// - Throws: ``ModelFormatError`` for other data types.
    package func floatValues(of blob: WeightBlob) throws -> [Float] {
        let width = blob.dataType.bitWidth / 8
        guard width > 0, blob.byteCount % width == 0 else {
            throw error(
                "blob at offset \(blob.metadataOffset) has \(blob.byteCount) bytes, not a whole number of "
                    + "\(blob.dataType.milDataType) elements")
        }
        switch blob.dataType {
        case .float32:
            return withUnsafeBytes(of: blob) { bytes in
                Self.convert(bytes, width: 4) {
                    Float(bitPattern: UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: $1, as: UInt32.self)))
                }
            }
        case .float16:
            return withUnsafeBytes(of: blob) { bytes in
                [Float](unsafeUninitializedCapacity: bytes.count / 2) { output, initialized in
                    Self.widenHalves(bytes, into: output.baseAddress!)
                    initialized = bytes.count / 2
                }
            }
        case .int8:
            return withUnsafeBytes(of: blob) { bytes in
                Self.convert(bytes, width: 1) { Float(Int8(bitPattern: $0[$1])) }
            }
        case .uint8:
            return withUnsafeBytes(of: blob) { bytes in
                Self.convert(bytes, width: 1) { Float($0[$1]) }
            }
        default:
            throw error(
                "blob at offset \(blob.metadataOffset) holds \(blob.dataType.milDataType) data, which Tessera does not read yet"
            )
        }
    }

    /// Writes the little-endian Float16 elements of `halves` (a whole number of them) as floats
    /// at `output`: by ``Float16Conversion/widen(_:into:count:)`` (vectorized, split across
    /// the kernel threads) when the data is aligned for it, else one at a time.
    static func widenHalves(_ halves: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<Float>) {
        let count = halves.count / 2
        guard let base = halves.baseAddress, count > 0 else { return }
        #if _endian(little)
            if Int(bitPattern: base) % MemoryLayout<Float16>.alignment == 0 {
                Float16Conversion.widen(base.assumingMemoryBound(to: Float16.self), into: output, count: count)
                return
            }
        #endif
        for index in 0..<count {
            let bits = UInt16(littleEndian: halves.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
            output[index] = Float(Float16(bitPattern: bits))
        }
    }

    /// Converts each `width`-byte element of `bytes` (a whole number of elements, checked by the caller).
    @inline(__always)
    static func convert(
        _ bytes: UnsafeRawBufferPointer, width: Int, _ load: (UnsafeRawBufferPointer, Int) -> Float
    ) -> [Float] {
        let count = bytes.count / width
        return [Float](unsafeUninitializedCapacity: count) { output, initialized in
            for index in 0..<count {
                output[index] = load(bytes, index * width)
            }
            initialized = count
        }
    }
}

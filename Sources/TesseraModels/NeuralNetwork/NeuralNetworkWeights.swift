/// Decodes a layer's `WeightParams` (`floatValue = 1`, `float16Value = 2`, `rawValue = 30`,
/// `int8RawValue = 31`, `quantization = 40`) into Float32 values, checking the count against
/// the shape the layer declares.
///
/// Float16 values widen exactly. Quantized values (`rawValue` as packed unsigned N-bit
/// integers, most significant bit first, N = 1…8; `int8RawValue` as signed bytes) dequantize
/// as `NeuralNetwork.proto` says: linear `w = q · scale + bias` with one scale and bias, or one
/// per channel, or a lookup table of 2^N values.
enum NeuralNetworkWeights {
    /// Where a per-channel quantization's channels are in the weight.
    enum ChannelAxis {
        /// The first axis (`[C, …]`): convolution and inner-product weights.
        case first
        /// The second axis of `[outer, C, …]`: deconvolution weights `[C_in, C_out/groups, kH, kW]`.
        case second(outer: Int)
    }

    /// The `count` Float32 values of `params`.
    ///
    /// - Parameters:
    ///   - params: The decoded `WeightParams` message, `nil` when the layer does not set it.
    ///   - count: The number of values the layer's shape needs.
    ///   - what: The parameter's name for messages (`weights`, `bias`).
    ///   - channelAxis: Where per-channel quantization parameters apply.
    /// - Throws: ``OperandError`` naming the parameter when the values are missing, their
    ///   count differs from `count`, or the quantization parameters do not fit.
    static func floats(
        _ params: ProtobufFieldTable?, count: Int, what: String, channelAxis: ChannelAxis = .first
    ) throws -> [Float] {
        guard let params else { throw OperandError("\(what) is missing (\(count) values expected)") }
        let values = try floatsOfAnyCount(params, expectedCount: count, what: what, channelAxis: channelAxis)
        guard values.count == count else {
            throw OperandError("\(what) holds \(values.count) values where the layer's shape needs \(count)")
        }
        return values
    }

    /// The values of `params` whatever their number (`expectedCount` decides how many
    /// packed sub-byte values a quantized blob holds; `nil` for a blob of unknown size).
    static func floatsOfAnyCount(
        _ params: ProtobufFieldTable, expectedCount: Int?, what: String, channelAxis: ChannelAxis = .first
    ) throws -> [Float] {
        let floats = try params.floats(1)
        if !floats.isEmpty { return floats }
        if let half = params.bytes(2), !half.isEmpty {
            guard half.count % 2 == 0 else {
                throw OperandError("\(what): float16Value has \(half.count) bytes, an odd number")
            }
            return half.withUnsafeBytes { buffer in
                (0..<(half.count / 2)).map {
                    Float(
                        Float16(
                            bitPattern: UInt16(
                                littleEndian: buffer.loadUnaligned(fromByteOffset: 2 * $0, as: UInt16.self))))
                }
            }
        }
        let quantization = try params.message(40, "QuantizationParams")
        if let raw = params.bytes(31), !raw.isEmpty {
            guard let linear = try quantization?.message(101, "LinearQuantizationParams") else {
                throw OperandError("\(what): int8RawValue needs linear quantization parameters")
            }
            let q = raw.map { Float(Int8(bitPattern: $0)) }
            return try dequantizeLinear(q, linear, what: what, channelAxis: channelAxis)
        }
        if let raw = params.bytes(30), !raw.isEmpty {
            guard let quantization else {
                throw OperandError("\(what): rawValue is set without quantization parameters")
            }
            let bits = quantization.size(1) ?? 0
            guard (1...8).contains(bits) else {
                throw OperandError("\(what): numberOfBits is \(bits); NeuralNetwork quantization uses 1 to 8 bits")
            }
            let count = expectedCount ?? raw.count * 8 / bits
            guard raw.count == (count * bits + 7) / 8 else {
                throw OperandError(
                    "\(what): rawValue has \(raw.count) bytes where \(count) \(bits)-bit values need "
                        + "\((count * bits + 7) / 8)")
            }
            let q = unpack(raw, count: count, bits: bits)
            if let linear = try quantization.message(101, "LinearQuantizationParams") {
                return try dequantizeLinear(q.map(Float.init), linear, what: what, channelAxis: channelAxis)
            }
            if let table = try quantization.message(102, "LookUpTableQuantizationParams") {
                let lut = try table.floats(1)
                guard lut.count == 1 << bits else {
                    throw OperandError(
                        "\(what): the lookup table has \(lut.count) entries where \(bits)-bit quantization needs \(1 << bits)"
                    )
                }
                return q.map { lut[Int($0)] }
            }
            throw OperandError("\(what): quantization sets neither linear nor lookup-table parameters")
        }
        return []
    }

    /// `count` unsigned `bits`-bit integers packed most significant bit first.
    static func unpack(_ bytes: [UInt8], count: Int, bits: Int) -> [UInt8] {
        if bits == 8 { return Array(bytes.prefix(count)) }
        var values = [UInt8](repeating: 0, count: count)
        var bit = 0
        for index in 0..<count {
            var value = 0
            for _ in 0..<bits {
                let byte = bytes[bit >> 3]
                value = (value << 1) | Int((byte >> (7 - UInt8(bit & 7))) & 1)
                bit += 1
            }
            values[index] = UInt8(value)
        }
        return values
    }

    /// `q · scale + bias`, per tensor or per channel.
    private static func dequantizeLinear(
        _ q: [Float], _ linear: ProtobufFieldTable, what: String, channelAxis: ChannelAxis
    ) throws -> [Float] {
        let scale = try linear.floats(1)
        var bias = try linear.floats(2)
        if bias.isEmpty { bias = [Float](repeating: 0, count: scale.count) }
        guard !scale.isEmpty, scale.count == bias.count else {
            throw OperandError(
                "\(what): linear quantization has \(scale.count) scales and \(bias.count) biases; they must be "
                    + "equally many, one or one per channel")
        }
        if scale.count == 1 { return q.map { $0 * scale[0] + bias[0] } }
        let channels = scale.count
        let outer: Int
        switch channelAxis {
        case .first: outer = 1
        case .second(let count): outer = Swift.max(count, 1)
        }
        guard q.count % (outer * channels) == 0 else {
            throw OperandError(
                "\(what): \(channels) per-channel quantization parameters do not divide its \(q.count) values")
        }
        let inner = q.count / (outer * channels)
        return q.indices.map { index in
            let channel = (index / inner) % channels
            return q[index] * scale[channel] + bias[channel]
        }
    }
}

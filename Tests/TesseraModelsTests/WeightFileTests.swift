import Foundation
import Testing

@testable import TesseraModels

/// Builds a MILBlob v2 file byte by byte from the layout in coremltools' `StorageFormat.hpp`.
struct WeightFileBuilder {
    var bytes = [UInt8](repeating: 0, count: 64)
    var count: UInt32 = 0

    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }

    /// Appends one blob record and its data; returns the metadata offset.
    @discardableResult
    mutating func append(type: UInt32, payload: [UInt8], sentinel: UInt32 = 0xDEAD_BEEF, padding: UInt64 = 0) -> UInt64
    {
        let offset = UInt64(bytes.count)
        var record = Self.littleEndian(sentinel) + Self.littleEndian(type)
        record += Self.littleEndian(UInt64(payload.count)) + Self.littleEndian(offset + 64) + Self.littleEndian(padding)
        // Reserved fields: garbage in old writers, which readers must ignore.
        record += [UInt8](repeating: 0xAB, count: 64 - record.count)
        bytes += record + payload
        while bytes.count % 64 != 0 { bytes.append(0) }
        count += 1
        return offset
    }

    func data(version: UInt32 = 2) -> Data {
        var header = Self.littleEndian(count) + Self.littleEndian(version)
        header += [UInt8](repeating: 0, count: 56)
        return Data(header + bytes[64...])
    }
}

@Suite("WeightFile (MILBlob v2)")
struct WeightFileTests {
    func tensorType(_ type: MILDataType, _ shape: [Int]) -> MILTensorType {
        MILTensorType(dataType: type, rank: shape.count, dimensions: shape.map { .constant($0) })
    }

    @Test("Float32, Float16, Int8 and UInt8 payloads decode to their values")
    func payloads() throws {
        var builder = WeightFileBuilder()
        let floats: [Float] = [1.5, -2, 0, .greatestFiniteMagnitude]
        let f32 = builder.append(type: 2, payload: floats.flatMap { WeightFileBuilder.littleEndian($0.bitPattern) })
        // fp16: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF, 2^-24 = 0x0001.
        let f16 = builder.append(type: 1, payload: [0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B, 0x01, 0x00])
        let i8 = builder.append(type: 4, payload: [0x80, 0xFF, 0x00, 0x7F])
        let u8 = builder.append(type: 3, payload: [0x80, 0xFF, 0x00, 0x7F])
        let file = try WeightFile(data: builder.data())
        #expect(file.blobCount == 4)
        #expect(try file.floatValues(of: file.blob(atMetadataOffset: f32)) == floats)
        #expect(try file.floatValues(of: file.blob(atMetadataOffset: f16)) == [1, -2, 65504, 0x1p-24])
        #expect(try file.floatValues(of: file.blob(atMetadataOffset: i8)) == [-128, -1, 0, 127])
        #expect(try file.floatValues(of: file.blob(atMetadataOffset: u8)) == [128, 255, 0, 127])
        #expect(try file.allBlobs().map(\.metadataOffset) == [f32, f16, i8, u8])
        let blob = try file.blob(atMetadataOffset: f16, for: tensorType(.float16, [2, 2]))
        #expect(blob.elementCount == 4)
        #expect(blob.dataOffset == Int(f16) + 64)
    }

    @Test("Float16 weights widen to their values, aligned (vectorized, long runs split) or not")
    func widenHalves() {
        // Bit patterns and their IEEE 754 binary16 values, written out by hand: 1, −2, the
        // largest finite, the smallest subnormal, the largest subnormal, −0, +∞.
        let bits: [UInt16] = [0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x8000, 0x7C00]
        let values: [Float] = [1, -2, 65504, 0x1p-24, 1023 * 0x1p-24, -0.0, .infinity]
        for count in [7, 7 * 20_000] {
            let halves = (0..<count).map { bits[$0 % bits.count] }
            let bytes = halves.flatMap { WeightFileBuilder.littleEndian($0) }
            for misalignment in [0, 1] {
                let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count + 1, alignment: 64)
                defer { storage.deallocate() }
                storage.copyBytes(from: [UInt8](repeating: 0xEE, count: misalignment) + bytes)
                let source = UnsafeRawBufferPointer(rebasing: storage[misalignment..<(misalignment + bytes.count)])
                let output = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
                    WeightFile.widenHalves(source, into: buffer.baseAddress!)
                    initialized = count
                }
                let wrong = (0..<count).first { output[$0].bitPattern != values[$0 % values.count].bitPattern }
                #expect(wrong == nil, "count \(count), misaligned by \(misalignment): element \(wrong ?? -1)")
            }
        }
    }

    @Test("headers that are short or of another version are rejected")
    func badHeaders() {
        expectFormatError(.invalidWeightFile) { _ = try WeightFile(data: Data(count: 63)) }
        expectFormatError(.invalidWeightFile) { _ = try WeightFile(data: WeightFileBuilder().data(version: 1)) }
        let missing = expectFormatError(.fileNotFound) {
            _ = try WeightFile(contentsOf: URL(fileURLWithPath: "/nonexistent/weights/weight.bin"))
        }
        #expect(missing?.file == "weights/weight.bin")
    }

    @Test("bad records throw with the offset: sentinel, type, alignment, bounds, padding")
    func badRecords() throws {
        var builder = WeightFileBuilder()
        let good = builder.append(type: 2, payload: [UInt8](repeating: 0, count: 16))
        let badSentinel = builder.append(type: 2, payload: [0, 0, 0, 0], sentinel: 0x1234_5678)
        let badType = builder.append(type: 99, payload: [0])
        let badPadding = builder.append(type: 9, payload: [0], padding: 8)
        let file = try WeightFile(data: builder.data())
        let sentinel = expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: badSentinel) }
        #expect(
            sentinel?.description
                == "weight.bin: blob at offset \(badSentinel) has sentinel 0x12345678 instead of 0xDEADBEEF; the file is corrupted"
        )
        expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: badType) }
        expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: badPadding) }
        expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: 0) }
        expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: good + 4) }
        expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: UInt64(file.byteCount)) }
        expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: UInt64.max - 63) }
        // Wrong type and wrong element count for the constant.
        expectFormatError(.invalidWeightFile) {
            _ = try file.blob(atMetadataOffset: good, for: tensorType(.float16, [8]))
        }
        expectFormatError(.invalidWeightFile) {
            _ = try file.blob(atMetadataOffset: good, for: tensorType(.float32, [5]))
        }
        // The walk stops at the first bad record.
        expectFormatError(.invalidWeightFile) { _ = try file.allBlobs() }
    }

    @Test("older coremltools' uninitialised padding field is ignored for byte-sized types, not for sub-byte ones")
    func uninitialisedPadding() throws {
        var builder = WeightFileBuilder()
        // The value an older package carried (the error message users reported).
        let garbage: UInt64 = 13_654_009_360
        let floats: [Float] = [0.5, -1]
        let f32 = builder.append(
            type: 2, payload: floats.flatMap { WeightFileBuilder.littleEndian($0.bitPattern) }, padding: garbage)
        let f16 = builder.append(type: 1, payload: [0x00, 0x3C, 0x00, 0xC0], padding: garbage)
        let u4 = builder.append(type: 11, payload: [0x21, 0x03], padding: garbage)
        let u4Padded = builder.append(type: 11, payload: [0x21, 0x03], padding: 4)
        let file = try WeightFile(data: builder.data())
        #expect(try file.floatValues(of: file.blob(atMetadataOffset: f32)) == floats)
        #expect(try file.blob(atMetadataOffset: f16).paddingBits == 0)
        #expect(try file.floatValues(of: file.blob(atMetadataOffset: f16)) == [1, -2])
        expectFormatError(.invalidWeightFile) { _ = try file.blob(atMetadataOffset: u4) }
        let padded = try file.blob(atMetadataOffset: u4Padded)
        #expect(padded.paddingBits == 4)
        #expect(padded.elementCount == 3)
    }

    @Test("data that runs past the end, and sizes near 2^64, are rejected")
    func truncatedData() throws {
        var builder = WeightFileBuilder()
        let offset = builder.append(type: 2, payload: [UInt8](repeating: 1, count: 256))
        let full = builder.data()
        let truncated = try WeightFile(data: full.prefix(64 + 64 + 100))
        let error = expectFormatError(.invalidWeightFile) { _ = try truncated.blob(atMetadataOffset: offset) }
        #expect(error.map { "\($0)".contains("past the end of the file (228 bytes)") } == true)

        var huge = [UInt8](full)
        huge.replaceSubrange(72..<80, with: WeightFileBuilder.littleEndian(UInt64.max))
        expectFormatError(.invalidWeightFile) { _ = try WeightFile(data: Data(huge)).blob(atMetadataOffset: offset) }
        var inside = [UInt8](full)
        inside.replaceSubrange(80..<88, with: WeightFileBuilder.littleEndian(UInt64(70)))
        expectFormatError(.invalidWeightFile) { _ = try WeightFile(data: Data(inside)).blob(atMetadataOffset: offset) }
    }

    @Test("a blob whose size is not a whole number of elements cannot be converted")
    func partialElements() throws {
        var builder = WeightFileBuilder()
        let offset = builder.append(type: 2, payload: [0, 0, 0, 0, 0, 0])
        let file = try WeightFile(data: builder.data())
        expectFormatError(.invalidWeightFile) { _ = try file.floatValues(of: file.blob(atMetadataOffset: offset)) }
    }
}

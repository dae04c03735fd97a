/// The fixed 128-byte header of `model.tessera`, the file inside a Tessera-compiled
/// `.mlmodelc` directory. All integers are little-endian.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `"TSRMLC\r\n"` |
/// | 8 | 4 | format version (``CompiledModelHeader/formatVersion``) |
/// | 12 | 4 | header size (128) |
/// | 16 | 16 | Tessera version that wrote the file, UTF-8, zero-padded |
/// | 32 | 8 | checksum of the source (specification and weight files) |
/// | 40 | 8 | checksum of everything after the header (``CompiledModelChecksum/chunked(_:chunkSize:progress:)``) |
/// | 48 | 8 | total file size |
/// | 56 | 16 | specification section: offset, size (the `Model` protobuf, as the source had it) |
/// | 72 | 16 | reference table section: offset, size (source blob → compiled blob) |
/// | 88 | 16 | weights section: offset, size (a MILBlob v2 image, 64-byte aligned) |
/// | 104 | 16 | prepared-weights section: offset, size; zero when absent (``CompiledPreparedWeights``) |
/// | 120 | 8 | checksum of bytes 0..<120 |
package struct CompiledModelHeader: Equatable {
    /// The file's name inside the compiled directory.
    package static let fileName = "model.tessera"
    /// The first eight bytes of every compiled file.
    static let magic: [UInt8] = Array("TSRMLC\r\n".utf8)
    /// The layout version this code writes and reads. Bump it for any change older readers
    /// cannot read; version 1 was the copy-of-the-package layout with a JSON marker.
    static let formatVersion: UInt32 = 2
    /// The Tessera version recorded in new files (keep in step with `TesseraVersion.string`).
    static let tesseraVersion = "0.1.0"
    /// The header's size in bytes.
    package static let size = 128
    /// The checksum chunk size for the content checksum.
    static let chunkSize = 4 << 20

    /// A section's place in the file.
    struct Section: Equatable {
        var offset: Int
        var size: Int
        var range: Range<Int> { offset..<(offset + size) }
    }

    var formatVersion: UInt32 = Self.formatVersion
    var tesseraVersion: String = Self.tesseraVersion
    var sourceChecksum: UInt64 = 0
    var contentChecksum: UInt64 = 0
    var totalSize: Int = 0
    var specification = Section(offset: 0, size: 0)
    var references = Section(offset: 0, size: 0)
    var weights = Section(offset: 0, size: 0)
    /// The prepared forms of the weights (``CompiledPreparedWeights``); empty when the file
    /// has none (files written before the section existed have zeros here). Out-of-bounds
    /// values read as empty: the section is optional, so a bad one is ignored, not an error.
    var prepared = Section(offset: 0, size: 0)

    /// Writes the header, including its own checksum, into the first 128 bytes of `buffer`.
    func write(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.size, "[CompiledModelHeader] buffer too small")
        for index in 0..<Self.size { buffer[index] = 0 }
        for (index, byte) in Self.magic.enumerated() { buffer[index] = byte }
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        }
        put(formatVersion, at: 8)
        put(UInt32(Self.size), at: 12)
        for (index, byte) in tesseraVersion.utf8.prefix(16).enumerated() { buffer[16 + index] = byte }
        put(sourceChecksum, at: 32)
        put(contentChecksum, at: 40)
        put(UInt64(totalSize), at: 48)
        for (index, section) in [specification, references, weights].enumerated() {
            put(UInt64(section.offset), at: 56 + 16 * index)
            put(UInt64(section.size), at: 64 + 16 * index)
        }
        put(UInt64(prepared.offset), at: 104)
        put(UInt64(prepared.size), at: 112)
        put(CompiledModelChecksum.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<120])), at: 120)
    }

    /// What is wrong with a header, in words for an error message.
    enum Problem: Error, Equatable {
        case tooShort(Int)
        case badMagic
        case otherVersion(UInt32, writer: String)
        case badHeaderChecksum
        case sizeMismatch(declared: Int, actual: Int)
        case sectionOutOfBounds(String)
    }

    /// Reads and checks a header from the start of a file of `buffer.count` bytes.
    init(reading buffer: UnsafeRawBufferPointer) throws(Problem) {
        guard buffer.count >= Self.size else { throw .tooShort(buffer.count) }
        guard Array(buffer[0..<8]) == Self.magic else { throw .badMagic }
        func get<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let versionBytes = buffer[16..<32].prefix { $0 != 0 }
        tesseraVersion = String(decoding: versionBytes, as: UTF8.self)
        formatVersion = get(8, UInt32.self)
        guard formatVersion == Self.formatVersion else { throw .otherVersion(formatVersion, writer: tesseraVersion) }
        let checksum = CompiledModelChecksum.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<120]))
        guard checksum == get(120, UInt64.self), get(12, UInt32.self) == UInt32(Self.size) else {
            throw .badHeaderChecksum
        }
        sourceChecksum = get(32, UInt64.self)
        contentChecksum = get(40, UInt64.self)
        let declared = get(48, UInt64.self)
        guard declared == UInt64(buffer.count) else {
            throw .sizeMismatch(declared: Int(clamping: declared), actual: buffer.count)
        }
        totalSize = buffer.count
        var sections: [Section] = []
        for (index, name) in ["specification", "reference table", "weights"].enumerated() {
            let offset = get(56 + 16 * index, UInt64.self)
            let size = get(64 + 16 * index, UInt64.self)
            guard offset >= UInt64(Self.size), offset <= UInt64(buffer.count), size <= UInt64(buffer.count) - offset
            else { throw .sectionOutOfBounds(name) }
            sections.append(Section(offset: Int(offset), size: Int(size)))
        }
        specification = sections[0]
        references = sections[1]
        weights = sections[2]
        guard weights.offset % 64 == 0 else { throw .sectionOutOfBounds("weights (not 64-byte aligned)") }
        let preparedOffset = get(104, UInt64.self)
        let preparedSize = get(112, UInt64.self)
        if preparedSize > 0, preparedOffset >= UInt64(Self.size), preparedOffset % 64 == 0,
            preparedOffset <= UInt64(buffer.count), preparedSize <= UInt64(buffer.count) - preparedOffset
        {
            prepared = Section(offset: Int(preparedOffset), size: Int(preparedSize))
        }
    }

    /// Creates an empty header to fill in.
    init() {}

    /// The content checksum of a whole file's bytes: everything after the header, in
    /// 4 MiB chunks checked on all cores; `progress` is called with the bytes done.
    static func contentChecksum(of buffer: UnsafeRawBufferPointer, progress: (Int) -> Void = { _ in }) -> UInt64 {
        CompiledModelChecksum.chunked(
            UnsafeRawBufferPointer(rebasing: buffer[min(size, buffer.count)...]), chunkSize: chunkSize,
            progress: progress)
    }
}

extension CompiledModelHeader {
    /// `bytes` with the header's declared size (offset 48), content checksum (40) and header
    /// checksum (120) rewritten to match the bytes; shorter input is returned as it is. The
    /// fuzz target for compiled models (`Fuzz/TesseraFuzz`) uses it so that mutations reach
    /// the sections behind the checksums.
    package static func repairingChecksums(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= size else { return bytes }
        var bytes = bytes
        func put(_ value: UInt64, at offset: Int) {
            for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        put(UInt64(bytes.count), at: 48)
        put(bytes.withUnsafeBytes { contentChecksum(of: $0) }, at: 40)
        put(
            bytes.withUnsafeBytes { CompiledModelChecksum.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<120])) },
            at: 120)
        return bytes
    }
}

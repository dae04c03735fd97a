import Foundation

/// A memory-mapped MILBlob v2 weight file (`weights/weight.bin` in an `.mlpackage`).
///
/// Layout (all little-endian; every record starts on a 64-byte boundary):
///
/// ```
/// 0    storage header: UInt32 count, UInt32 version (= 2), 56 reserved bytes
/// 64   blob metadata: UInt32 sentinel 0xDEADBEEF, UInt32 data type, UInt64 size in bytes,
///      UInt64 data offset, UInt64 padding bits, 32 reserved bytes
/// 128  data …, zero padding to 64, next metadata …
/// ```
///
/// Constants refer to a blob by the offset of its metadata record. Every read checks the
/// sentinel, the data type and that the data lies inside the file, so a corrupted or
/// truncated file throws ``ModelFormatError`` instead of reading out of bounds. The file is
/// mapped, not read: only the pages of the blobs that are used are loaded.
package struct WeightFile: Sendable {
    /// The size of the storage header and of each metadata record.
    package static let recordSize = 64
    /// The value every metadata record starts with.
    package static let sentinel: UInt32 = 0xDEAD_BEEF

    /// The file's location.
    package let url: URL
    /// The name used in error messages (`weights/weight.bin`).
    package let displayName: String
    /// The mapped bytes.
    let data: Data
    /// The number of blobs the header declares.
    package let blobCount: Int

    /// Maps a weight file and checks its header.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - displayName: How errors name the file; defaults to the last two path components.
    /// - Throws: ``ModelFormatError`` when the file is missing, shorter than its header, or
    ///   not storage version 2.
    package init(contentsOf url: URL, displayName: String? = nil) throws {
        let name = displayName ?? url.pathComponents.suffix(2).joined(separator: "/")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ModelFormatError(.fileNotFound, file: name, "the weight file does not exist at \(url.path)")
        }
        let data: Data
        do {
            data = try Data(readingFile: url, options: .alwaysMapped)
        } catch {
            throw ModelFormatError(
                .unreadableFile, file: name, "cannot read the weight file: \(error.localizedDescription)")
        }
        try self.init(data: data, url: url, displayName: name)
    }

    /// Wraps bytes already in memory (tests, and files read by other means).
    package init(data: Data, url: URL = URL(fileURLWithPath: "/weight.bin"), displayName: String = "weight.bin") throws
    {
        self.url = url
        self.displayName = displayName
        self.data = data
        guard data.count >= Self.recordSize else {
            throw ModelFormatError(
                .invalidWeightFile, file: displayName,
                "the file is \(data.count) bytes, shorter than its 64-byte header; the package is truncated or corrupted"
            )
        }
        let (count, version) = data.withUnsafeBytes { buffer in
            (
                UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
                UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            )
        }
        guard version == 2 else {
            throw ModelFormatError(
                .invalidWeightFile, file: displayName,
                "storage version \(version) is not supported (expected 2, the MILBlob v2 format coremltools writes)")
        }
        self.blobCount = Int(count)
    }

    /// The file's size in bytes.
    package var byteCount: Int { data.count }

    /// Reads and checks the metadata record at `offset`.
    ///
    /// - Throws: ``ModelFormatError`` when the offset is not 64-byte aligned, the record or
    ///   its data run past the end of the file, the sentinel is wrong or the type unknown.
    package func blob(atMetadataOffset offset: UInt64) throws -> WeightBlob {
        guard offset >= UInt64(Self.recordSize), offset % UInt64(Self.recordSize) == 0 else {
            throw error("blob offset \(offset) is not a metadata record (records start at multiples of 64 from 64)")
        }
        guard offset <= UInt64(data.count), UInt64(data.count) - offset >= UInt64(Self.recordSize) else {
            throw error(
                "blob at offset \(offset) runs past the end of the file (\(data.count) bytes); "
                    + "the package is truncated or corrupted")
        }
        let start = Int(offset)
        let (sentinel, rawType, size, dataOffset, padding) = data.withUnsafeBytes { buffer in
            (
                UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt32.self)),
                UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self)),
                UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self)),
                UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start + 16, as: UInt64.self)),
                UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start + 24, as: UInt64.self))
            )
        }
        guard sentinel == Self.sentinel else {
            let hex = String(sentinel, radix: 16, uppercase: true)
            throw error("blob at offset \(offset) has sentinel 0x\(hex) instead of 0xDEADBEEF; the file is corrupted")
        }
        guard let dataType = WeightBlobDataType(rawValue: rawType) else {
            throw error("blob at offset \(offset) has unknown data type \(rawType)")
        }
        guard dataOffset >= offset + UInt64(Self.recordSize) else {
            throw error("blob at offset \(offset) places its data at \(dataOffset), inside its own header")
        }
        guard dataOffset <= UInt64(data.count), size <= UInt64(data.count) - dataOffset else {
            throw error(
                "blob at offset \(offset) has \(size) bytes of data at offset \(dataOffset), past the end of the file "
                    + "(\(data.count) bytes); the package is truncated or corrupted")
        }
        // Core ML reads the padding-bits field only for sub-byte types: older coremltools
        // versions left it uninitialised for the others, so it is ignored there.
        let paddingBits: Int
        if dataType.bitWidth < 8 {
            guard padding < 8 else {
                throw error("blob at offset \(offset) declares \(padding) padding bits (at most 7 are possible)")
            }
            paddingBits = Int(padding)
        } else {
            paddingBits = 0
        }
        return WeightBlob(
            metadataOffset: offset, dataType: dataType, dataOffset: Int(dataOffset), byteCount: Int(size),
            paddingBits: paddingBits)
    }

    /// Reads the blob a constant refers to and checks it against the constant's type.
    ///
    /// - Parameters:
    ///   - offset: `BlobFileValue.offset`.
    ///   - type: The constant's declared tensor type; the blob's data type must be its
    ///     element type, and its size must hold exactly its elements.
    package func blob(atMetadataOffset offset: UInt64, for type: MILTensorType) throws -> WeightBlob {
        let blob = try blob(atMetadataOffset: offset)
        guard blob.dataType.milDataType == type.dataType else {
            throw error(
                "blob at offset \(offset) holds \(blob.dataType.milDataType) data but the constant is \(type)")
        }
        if let count = type.elementCount {
            let (bits, overflow) = count.multipliedReportingOverflow(by: blob.dataType.bitWidth)
            guard !overflow, (bits + 7) / 8 == blob.byteCount else {
                throw error(
                    "blob at offset \(offset) has \(blob.byteCount) bytes but a \(type) constant needs "
                        + "\(overflow ? "more" : String((bits + 7) / 8))")
            }
        }
        return blob
    }

    /// Every blob, walked from the first record as coremltools' `StorageReader` does.
    package func allBlobs() throws -> [WeightBlob] {
        var blobs: [WeightBlob] = []
        var offset = UInt64(Self.recordSize)
        for _ in 0..<blobCount {
            let blob = try blob(atMetadataOffset: offset)
            blobs.append(blob)
            offset = (UInt64(blob.dataOffset) + UInt64(blob.byteCount) + 63) / 64 * 64
        }
        return blobs
    }

    /// Calls `body` with the blob's bytes, borrowed from the mapping.
    ///
    /// `blob` must come from this file (its bounds were checked when it was read).
    package func withUnsafeBytes<Result>(
        of blob: WeightBlob, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        precondition(blob.dataOffset + blob.byteCount <= data.count, "[WeightFile] blob from another file")
        return try data.withUnsafeBytes { buffer in
            try body(UnsafeRawBufferPointer(rebasing: buffer[blob.dataOffset..<blob.dataOffset + blob.byteCount]))
        }
    }

    /// A format error naming this file.
    func error(_ message: String) -> ModelFormatError {
        ModelFormatError(.invalidWeightFile, file: displayName, message)
    }
}

/// One checked blob record of a ``WeightFile``.
package struct WeightBlob: Sendable, Equatable {
    /// The offset of the metadata record (what `BlobFileValue.offset` holds).
    package var metadataOffset: UInt64
    /// The element type.
    package var dataType: WeightBlobDataType
    /// The offset of the first data byte.
    package var dataOffset: Int
    /// The number of data bytes.
    package var byteCount: Int
    /// Unused bits at the end of the last byte (sub-byte types only).
    package var paddingBits: Int

    /// The number of elements stored.
    package var elementCount: Int { (byteCount * 8 - paddingBits) / dataType.bitWidth }
}

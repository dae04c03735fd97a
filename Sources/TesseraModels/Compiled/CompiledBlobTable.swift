/// Where each weight blob of the source program lives in a compiled model's weights
/// section, and whether it was widened from Float16 to Float32 when compiling.
///
/// Encoded as: entry count (`UInt32`), then per entry the source file name (length as
/// `UInt32`, UTF-8 bytes), the source metadata offset (`UInt64`), the compiled metadata
/// offset (`UInt64`) and flags (`UInt32`, bit 0: widened to Float32); little-endian.
struct CompiledBlobTable: Equatable {
    /// One blob.
    struct Entry: Equatable {
        /// The reference as the source program writes it.
        var source: MILBlobReference
        /// The blob's metadata offset in the compiled weights section.
        var offset: UInt64
        /// Whether a Float16 blob was stored as Float32.
        var widened: Bool
    }

    /// The file name compiled programs reference their weights by.
    static let compiledFileName = "@model_path/weights/weight.bin"

    /// The entries, in weights-section order.
    var entries: [Entry] = []

    /// Creates an empty table.
    init() {}

    /// The table's bytes.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        put(UInt32(entries.count))
        for entry in entries {
            let name = Array(entry.source.fileName.utf8)
            put(UInt32(name.count))
            bytes += name
            put(entry.source.offset)
            put(entry.offset)
            put(UInt32(entry.widened ? 1 : 0))
        }
        return bytes
    }

    /// Decodes a table, checking every length.
    ///
    /// - Throws: a message for ``MLModelError`` when the bytes are malformed.
    init(decoding bytes: UnsafeRawBufferPointer) throws(CompiledModelHeader.Problem) {
        var offset = 0
        func get<T: FixedWidthInteger>(_: T.Type) throws(CompiledModelHeader.Problem) -> T {
            guard bytes.count - offset >= MemoryLayout<T>.size else { throw .sectionOutOfBounds("reference table") }
            defer { offset += MemoryLayout<T>.size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let count = Int(try get(UInt32.self))
        guard count <= bytes.count / 24 else { throw .sectionOutOfBounds("reference table") }
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let length = Int(try get(UInt32.self))
            guard bytes.count - offset >= length else { throw .sectionOutOfBounds("reference table") }
            let name = String(
                decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
            offset += length
            let source = try get(UInt64.self)
            let compiled = try get(UInt64.self)
            let flags = try get(UInt32.self)
            entries.append(
                Entry(
                    source: MILBlobReference(fileName: name, offset: source), offset: compiled, widened: flags & 1 != 0)
            )
        }
    }
}

/// What relinking a compiled program's blob references needs: where each source blob went,
/// and the compiled weights section each relinked blob is checked against.
struct BlobRelinking {
    /// The compiled location of each source reference.
    let table: [MILBlobReference: CompiledBlobTable.Entry]
    /// The compiled weights section; `nil` when the file has none (then no reference may remain).
    let weights: WeightFile?
    /// Whether every reference was in ``table`` so far.
    var complete = true

    /// The relinked reference for `reference` (`nil` when the table lacks it), with whether its
    /// blob was widened to fp32.
    mutating func relinked(_ reference: MILBlobReference) -> (MILBlobReference, widened: Bool)? {
        guard let entry = table[reference] else {
            complete = false
            return nil
        }
        return (MILBlobReference(fileName: CompiledBlobTable.compiledFileName, offset: entry.offset), entry.widened)
    }

    /// Checks that the relinked blob at `reference` exists in the weights section and holds
    /// what `type` declares (data type and size).
    ///
    /// - Throws: ``ModelFormatError`` when it does not, or the value has no tensor type.
    func check(_ reference: MILBlobReference, type: MILValueType?) throws {
        guard let weights, let tensorType = type?.tensorType else {
            throw ModelFormatError(
                .invalidSpecification, file: CompiledModelHeader.fileName,
                "a weight reference has no tensor type or no weights section")
        }
        _ = try weights.blob(atMetadataOffset: reference.offset, for: tensorType)
    }
}

extension MILProgram {
    /// Points every blob reference at the compiled weights section, retypes widened blobs
    /// (and the `const` outputs they define) from fp16 to fp32, and checks every relinked blob
    /// against its value's type (``BlobRelinking/check(_:type:)``), in one walk of the program.
    ///
    /// - Returns: `false` when a reference is missing from the table.
    /// - Throws: ``ModelFormatError`` for a blob the weights section does not hold as declared.
    mutating func relinkBlobs(_ relinking: inout BlobRelinking) throws -> Bool {
        // In place, level by level (the keys taken first): a copy of a function or block that is
        // then mutated makes every container under it copy itself.
        for name in Array(functions.keys) {
            for key in Array(functions[name]!.blockSpecializations.keys) {
                try functions[name]!.blockSpecializations[key]!.relinkBlobs(&relinking)
            }
        }
        return relinking.complete
    }
}

extension MILBlock {
    /// Relinks this block's operations and their nested blocks.
    mutating func relinkBlobs(_ relinking: inout BlobRelinking) throws {
        // In place, and only the values that hold a blob reference: copying each operation out
        // and back made every operation's dictionaries copy themselves (a fifth of decoding M1).
        for index in operations.indices { try operations[index].relinkBlobs(&relinking) }
    }
}

extension MILOperation {
    /// Relinks this operation's blob references (attributes, input values, nested blocks);
    /// a `const` whose value was widened gets an fp32 output type.
    mutating func relinkBlobs(_ relinking: inout BlobRelinking) throws {
        var widened = false
        for key in attributes.compactMap({ $0.value.holdsBlobReference ? $0.key : nil }) {
            widened = try attributes[key]!.relinkBlobs(&relinking) || widened
        }
        let linkedInputs = inputs.compactMap { name, argument in
            argument.bindings.contains {
                if case .value(let value) = $0 { value.holdsBlobReference } else { false }
            } ? name : nil
        }
        for key in linkedInputs {
            for position in inputs[key]!.bindings.indices {
                if case .value(var value) = inputs[key]!.bindings[position], value.holdsBlobReference {
                    _ = try value.relinkBlobs(&relinking)
                    inputs[key]!.bindings[position] = .value(value)
                }
            }
        }
        if widened, type == "const", outputs.count == 1 {
            outputs[0].type = outputs[0].type.widenedToFloat32
        }
        for position in blocks.indices {
            try blocks[position].relinkBlobs(&relinking)
        }
    }
}

extension MILValue {
    /// Whether this value is a blob-file value or an immediate list, tuple or dictionary
    /// holding one.
    var holdsBlobReference: Bool {
        switch storage {
        case .blobFile: true
        case .immediate(.list(let elements)), .immediate(.tuple(let elements)):
            elements.contains(where: \.holdsBlobReference)
        case .immediate(.dictionary(let entries)):
            entries.contains { $0.key.holdsBlobReference || $0.value.holdsBlobReference }
        case .immediate(.tensor), .none: false
        }
    }

    /// Relinks a blob-file value (or the elements of an immediate list, tuple or dictionary)
    /// and checks the relinked blob.
    ///
    /// - Returns: whether this value itself was widened to fp32.
    mutating func relinkBlobs(_ relinking: inout BlobRelinking) throws -> Bool {
        switch storage {
        case .blobFile(let reference):
            guard let (relinked, widened) = relinking.relinked(reference) else { return false }
            storage = .blobFile(relinked)
            if widened { type = type?.widenedToFloat32 }
            try relinking.check(relinked, type: type)
            return widened
        case .immediate(.list(var elements)):
            for index in elements.indices { _ = try elements[index].relinkBlobs(&relinking) }
            storage = .immediate(.list(elements))
        case .immediate(.tuple(var elements)):
            for index in elements.indices { _ = try elements[index].relinkBlobs(&relinking) }
            storage = .immediate(.tuple(elements))
        case .immediate(.dictionary(var entries)):
            for index in entries.indices {
                _ = try entries[index].key.relinkBlobs(&relinking)
                _ = try entries[index].value.relinkBlobs(&relinking)
            }
            storage = .immediate(.dictionary(entries))
        case .immediate(.tensor), .none:
            break
        }
        return false
    }
}

extension MILValueType {
    /// The same type with an fp16 tensor element type replaced by fp32.
    var widenedToFloat32: MILValueType {
        guard case .tensor(var tensor) = self, tensor.dataType == .float16 else { return self }
        tensor.dataType = .float32
        return .tensor(tensor)
    }
}

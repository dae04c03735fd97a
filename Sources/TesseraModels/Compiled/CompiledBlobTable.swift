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

extension MILProgram {
    /// Points every blob reference at the compiled weights section, and retypes widened
    /// blobs (and the `const` outputs they define) from fp16 to fp32.
    ///
    /// - Returns: `false` when a reference is missing from the table.
    mutating func relinkBlobs(_ table: [MILBlobReference: CompiledBlobTable.Entry]) -> Bool {
        // In place, level by level (the keys taken first): a copy of a function or block that is
        // then mutated makes every container under it copy itself.
        var complete = true
        for name in Array(functions.keys) {
            for key in Array(functions[name]!.blockSpecializations.keys) {
                functions[name]!.blockSpecializations[key]!.relinkBlobs(table, complete: &complete)
            }
        }
        return complete
    }
}

extension MILBlock {
    /// Relinks this block's operations and their nested blocks.
    mutating func relinkBlobs(_ table: [MILBlobReference: CompiledBlobTable.Entry], complete: inout Bool) {
        // In place, and only the values that hold a blob reference: copying each operation out
        // and back made every operation's dictionaries copy themselves (a fifth of decoding M1).
        for index in operations.indices { operations[index].relinkBlobs(table, complete: &complete) }
    }
}

extension MILOperation {
    /// Relinks this operation's blob references (attributes, input values, nested blocks);
    /// a `const` whose value was widened gets an fp32 output type.
    mutating func relinkBlobs(_ table: [MILBlobReference: CompiledBlobTable.Entry], complete: inout Bool) {
        var widened = false
        for key in attributes.compactMap({ $0.value.holdsBlobReference ? $0.key : nil }) {
            widened = attributes[key]!.relinkBlobs(table, complete: &complete) || widened
        }
        let linkedInputs = inputs.compactMap { name, argument in
            argument.bindings.contains {
                if case .value(let value) = $0 { value.holdsBlobReference } else { false }
            } ? name : nil
        }
        for key in linkedInputs {
            for position in inputs[key]!.bindings.indices {
                if case .value(var value) = inputs[key]!.bindings[position], value.holdsBlobReference {
                    _ = value.relinkBlobs(table, complete: &complete)
                    inputs[key]!.bindings[position] = .value(value)
                }
            }
        }
        if widened, type == "const", outputs.count == 1 {
            outputs[0].type = outputs[0].type.widenedToFloat32
        }
        for position in blocks.indices {
            blocks[position].relinkBlobs(table, complete: &complete)
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

    /// Relinks a blob-file value (or the elements of an immediate list, tuple or dictionary).
    ///
    /// - Returns: whether this value itself was widened to fp32.
    mutating func relinkBlobs(_ table: [MILBlobReference: CompiledBlobTable.Entry], complete: inout Bool) -> Bool {
        switch storage {
        case .blobFile(let reference):
            guard let entry = table[reference] else {
                complete = false
                return false
            }
            storage = .blobFile(MILBlobReference(fileName: CompiledBlobTable.compiledFileName, offset: entry.offset))
            if entry.widened { type = type?.widenedToFloat32 }
            return entry.widened
        case .immediate(.list(var elements)):
            for index in elements.indices { _ = elements[index].relinkBlobs(table, complete: &complete) }
            storage = .immediate(.list(elements))
        case .immediate(.tuple(var elements)):
            for index in elements.indices { _ = elements[index].relinkBlobs(table, complete: &complete) }
            storage = .immediate(.tuple(elements))
        case .immediate(.dictionary(var entries)):
            for index in entries.indices {
                _ = entries[index].key.relinkBlobs(table, complete: &complete)
                _ = entries[index].value.relinkBlobs(table, complete: &complete)
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

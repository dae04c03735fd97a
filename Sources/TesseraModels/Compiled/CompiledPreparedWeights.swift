import TesseraKernels

/// The prepared-weights section of `model.tessera`: the packed forms the kernels read
/// (``PreparedWeights``: GEMM panels, right-packed strips, Winograd-transformed filters) of
/// the weights a load of the model prepares, made by `MLModel.compileModel(at:)` so that a
/// compiled model's load maps them instead of packing. Little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `"TSRPREP1"` |
/// | 8 | 8 | the CPU layout tag the forms were made for (``PreparedWeights/layoutTag``) |
/// | 16 | 8 | form count `n` |
/// | 24 | 8 | reserved, zero |
/// | 32 | 48 · n | per form: kind (`UInt32`), zero (`UInt32`), weight offset from the file's start, rows, depth, parameter (``PreparedWeights/StoredForm``), data offset from the section's start (64-byte aligned) |
/// | … | | the forms' packed floats |
///
/// The section is optional: a file without it, with another CPU's tag, or with a malformed
/// section loads as it did before (its weights are packed at load).
enum CompiledPreparedWeights {
    static let magic: [UInt8] = Array("TSRPREP1".utf8)
    static let headerSize = 32
    static let recordSize = 48

    /// The size of the section for `forms`.
    static func byteCount(of forms: [(form: PreparedWeights.StoredForm, bytes: UnsafeRawBufferPointer)]) -> Int {
        forms.reduce(CompiledModelWriter.align(headerSize + recordSize * forms.count, to: 64)) {
            CompiledModelWriter.align($0 + $1.bytes.count, to: 64)
        }
    }

    /// Writes the section for `forms`, packed on a CPU whose ``PreparedWeights/layoutTag`` is
    /// `tag`, into `buffer`: ``byteCount(of:)`` bytes, zeroed (the padding is not written).
    static func encode(
        _ forms: [(form: PreparedWeights.StoredForm, bytes: UnsafeRawBufferPointer)], tag: UInt64,
        into buffer: UnsafeMutableRawBufferPointer
    ) {
        precondition(buffer.count == byteCount(of: forms), "[CompiledPreparedWeights] section buffer of the wrong size")
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        }
        for (index, byte) in magic.enumerated() { buffer[index] = byte }
        put(tag, at: 8)
        put(UInt64(forms.count), at: 16)
        var dataOffset = CompiledModelWriter.align(headerSize + recordSize * forms.count, to: 64)
        for (index, (form, data)) in forms.enumerated() {
            let record = headerSize + recordSize * index
            put(form.kind.rawValue, at: record)
            put(UInt64(form.weightOffset), at: record + 8)
            put(UInt64(form.rows), at: record + 16)
            put(UInt64(form.depth), at: record + 24)
            put(UInt64(form.parameter), at: record + 32)
            put(UInt64(dataOffset), at: record + 40)
            if let source = data.baseAddress {
                (buffer.baseAddress! + dataOffset).copyMemory(from: source, byteCount: data.count)
            }
            dataOffset = CompiledModelWriter.align(dataOffset + data.count, to: 64)
        }
    }

    /// The forms in `section` (part of `file`, whose weights section is `weights`) with their
    /// packed bytes in place; `nil` when the section is absent, made for another CPU (a tag other
    /// than `tag`) or malformed in any way.
    static func decode(
        _ section: CompiledModelHeader.Section, of file: UnsafeRawBufferPointer,
        weights: CompiledModelHeader.Section, tag: UInt64 = PreparedWeights.layoutTag
    ) -> [(form: PreparedWeights.StoredForm, packed: UnsafeRawPointer)]? {
        guard section.size >= headerSize, section.range.upperBound <= file.count, let base = file.baseAddress else {
            return nil
        }
        let bytes = UnsafeRawBufferPointer(rebasing: file[section.range])
        func get<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        guard Array(bytes[0..<8]) == magic, get(8, UInt64.self) == tag else { return nil }
        let count = get(16, UInt64.self)
        guard count <= UInt64((bytes.count - headerSize) / recordSize) else { return nil }
        var forms: [(form: PreparedWeights.StoredForm, packed: UnsafeRawPointer)] = []
        forms.reserveCapacity(Int(count))
        let limit = UInt64(Int.max / 2)
        for index in 0..<Int(count) {
            let record = headerSize + recordSize * index
            let fields = (8..<48).striding(by: 8).map { get(record + $0, UInt64.self) }
            guard let kind = PreparedWeights.StoredForm.Kind(rawValue: get(record, UInt32.self)),
                fields.allSatisfy({ $0 < limit })
            else { return nil }
            let form = PreparedWeights.StoredForm(
                kind: kind, weightOffset: Int(fields[0]), rows: Int(fields[1]), depth: Int(fields[2]),
                parameter: Int(fields[3]))
            let dataOffset = Int(fields[4])
            guard let byteCount = form.byteCount, dataOffset % 64 == 0, dataOffset >= headerSize,
                dataOffset <= bytes.count, byteCount <= bytes.count - dataOffset,
                weights.range.contains(form.weightOffset), form.weightOffset % MemoryLayout<Float>.alignment == 0
            else { return nil }
            let packed = base + section.offset + dataOffset
            guard Int(bitPattern: packed) % 64 == 0 else { return nil }
            forms.append((form, packed))
        }
        return forms
    }
}

extension Range where Bound == Int {
    /// The bounds from the start in steps of `step`.
    fileprivate func striding(by step: Int) -> StrideTo<Int> { stride(from: lowerBound, to: upperBound, by: step) }
}

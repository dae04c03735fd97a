import Foundation
import TesseraKernels

/// Writes Tessera's compiled form of a model: `<name>.mlmodelc/model.tessera`, one file
/// with a checked header, the specification, a blob table and the weights laid out as a
/// MILBlob v2 image in which every Float16 constant is already widened to Float32 (the type
/// Tessera computes in), each blob 64-byte aligned so the loader maps the file and reads
/// weights in place, followed by the weights' prepared forms for the compiling CPU
/// (``CompiledPreparedWeights``). See ``CompiledModelHeader`` for the layout.
enum CompiledModelWriter {
    /// Compiles `source` (an `.mlpackage` or `.mlmodel`) into a new temporary directory and
    /// returns the `.mlmodelc` URL.
    ///
    /// - Throws: ``MLModelError`` `.io` when the source is missing or malformed or the
    ///   output cannot be written.
    static func compile(_ source: URL, progress: ProgressReporter) throws -> URL {
        let name = source.lastPathComponent
        progress.report(.reading)
        let package: CoreMLPackage
        let specification: Data
        do {
            package = try CoreMLPackage(contentsOf: source)
            specification = try CoreMLPackage.read(package.modelURL, name: package.modelDisplayName)
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
        let image: MappedFile
        do {
            image = try build(package: package, specification: specification, progress: progress)
        } catch let error as ModelFormatError {
            throw MLModelError(wrapping: error, model: name)
        }
        let contents = withPreparedForms(of: image, name: name) { sealed(image, preparedForms: $0) }
        let fileManager = FileManager.default
        let folder = fileManager.temporaryDirectory.appendingPathComponent("tessera-compile-\(UUID().uuidString)")
        let output = folder.appendingPathComponent(source.deletingPathExtension().lastPathComponent + ".mlmodelc")
        progress.report(.writing, 0, of: contents.count)
        do {
            try fileManager.createDirectory(at: output, withIntermediateDirectories: true)
            try contents.write(to: output.appendingPathComponent(CompiledModelHeader.fileName))
        } catch {
            try? fileManager.removeItem(at: folder)
            throw MLModelError(.io, "cannot write the compiled model for \(name) at \(output.path): \(error)")
        }
        progress.report(.writing, contents.count, of: contents.count)
        progress.report(.done)
        return output
    }

    /// One blob's place in the compiled weights section.
    private struct Placement {
        var reference: MILBlobReference
        var file: WeightFile
        var blob: WeightBlob
        var widened: Bool
        var offset: Int
        var byteCount: Int
    }

    /// The bytes of `model.tessera` for a parsed package, without the prepared-weights section
    /// and with the content checksum not yet computed (``sealed(_:preparedForms:)`` adds
    /// both), in page-aligned memory as a mapped file's are.
    static func build(package: CoreMLPackage, specification: Data, progress: ProgressReporter) throws -> MappedFile {
        var references: [MILBlobReference: MILValueType?] = [:]
        try package.model.mlProgram?.forEachBlobReference { reference, type in references[reference] = type }
        let widenable = package.model.mlProgram.map(widenableReferences) ?? []

        // Lay out the weights section: a 64-byte MILBlob header, then per blob a 64-byte
        // record and its data, each starting on a 64-byte boundary.
        var placements: [Placement] = []
        var weightsSize = WeightFile.recordSize
        let ordered = references.keys.sorted { ($0.fileName, $0.offset) < ($1.fileName, $1.offset) }
        for reference in ordered {
            guard let tensorType = references[reference]??.tensorType else { continue }
            let (file, blob) = try package.blob(for: reference, type: tensorType)
            let widened = blob.dataType == .float16 && widenable.contains(reference)
            let byteCount = widened ? blob.elementCount * 4 : blob.byteCount
            placements.append(
                Placement(
                    reference: reference, file: file, blob: blob, widened: widened, offset: weightsSize,
                    byteCount: byteCount))
            weightsSize = align(weightsSize + WeightFile.recordSize + byteCount, to: 64)
        }
        if placements.isEmpty { weightsSize = 0 }

        var table = CompiledBlobTable()
        table.entries = placements.map {
            CompiledBlobTable.Entry(source: $0.reference, offset: UInt64($0.offset), widened: $0.widened)
        }
        let tableBytes = table.encoded()
        var header = CompiledModelHeader()
        header.specification = .init(offset: CompiledModelHeader.size, size: specification.count)
        header.references = .init(offset: align(header.specification.range.upperBound, to: 8), size: tableBytes.count)
        header.weights = .init(offset: align(header.references.range.upperBound, to: 64), size: weightsSize)
        header.totalSize = header.weights.range.upperBound
        header.sourceChecksum = sourceChecksum(specification: specification, package: package)

        return MappedFile(zeroedByteCount: header.totalSize) { buffer in
            specification.withUnsafeBytes { bytes in
                buffer.baseAddress!.advanced(by: header.specification.offset).copyMemory(
                    from: bytes.baseAddress!, byteCount: bytes.count)
            }
            tableBytes.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress {
                    (buffer.baseAddress! + header.references.offset).copyMemory(from: source, byteCount: bytes.count)
                }
            }
            if weightsSize > 0 {
                let weights = UnsafeMutableRawBufferPointer(rebasing: buffer[header.weights.range])
                weights.storeBytes(of: UInt32(placements.count).littleEndian, toByteOffset: 0, as: UInt32.self)
                weights.storeBytes(of: UInt32(2).littleEndian, toByteOffset: 4, as: UInt32.self)
                let total = placements.reduce(0) { $0 + $1.byteCount }
                var done = 0
                progress.report(.packingWeights, 0, of: total)
                for placement in placements {
                    write(placement, into: weights)
                    done += placement.byteCount
                    progress.report(.packingWeights, done, of: total)
                }
            }
            header.write(into: buffer)
        }
    }

    /// Runs `body` on the packed forms a load of the compiled model in `image` (as
    /// ``build(package:specification:progress:)`` made it) prepares on this CPU, found by loading
    /// it from `image` (the forms' bytes live while `body` runs); on `[]` when the model does not
    /// load or prepares nothing. `image` is decoded without checking its content checksum: it has
    /// none yet, and its bytes were made by this process.
    static func withPreparedForms<Result>(
        of image: MappedFile, name: String,
        _ body: ([(form: PreparedWeights.StoredForm, bytes: UnsafeRawBufferPointer)]) -> Result
    ) -> Result {
        let directory = MLModel.inMemoryDirectory.appendingPathComponent(name)
        guard
            let package = try? CompiledModelReader.decode(
                image, directory: directory, progress: ProgressReporter(handler: nil), inMemory: true,
                verifyingContents: false),
            package.model.mlProgram != nil,
            let model = try? MLModel(
                package: package, snapshot: MLModelConfiguration().snapshot, name: name,
                reporter: ProgressReporter(handler: nil))
        else { return body([]) }
        return withExtendedLifetime(model) { body(PreparedWeights.forms(in: image.bytes)) }
    }

    /// The whole `model.tessera`: `image` followed (64-byte aligned) by the prepared-weights
    /// section (``CompiledPreparedWeights``) of `forms` when there are any, the header's sizes and
    /// content checksum filled in. The section is encoded in place and the checksum computed
    /// once, over the final bytes.
    static func sealed(
        _ image: MappedFile, preparedForms forms: [(form: PreparedWeights.StoredForm, bytes: UnsafeRawBufferPointer)]
    ) -> Data {
        guard var header = try? CompiledModelHeader(reading: image.bytes) else { return Data(image.bytes) }
        if !forms.isEmpty {
            header.prepared = .init(
                offset: align(image.bytes.count, to: 64), size: CompiledPreparedWeights.byteCount(of: forms))
            header.totalSize = header.prepared.range.upperBound
        }
        var result = Data(count: header.totalSize)
        result.withUnsafeMutableBytes { buffer in
            if let source = image.bytes.baseAddress {
                buffer.baseAddress!.copyMemory(from: source, byteCount: image.bytes.count)
            }
            if !forms.isEmpty {
                CompiledPreparedWeights.encode(
                    forms, tag: PreparedWeights.layoutTag,
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[header.prepared.range]))
            }
            header.contentChecksum = CompiledModelHeader.contentChecksum(of: UnsafeRawBufferPointer(buffer))
            header.write(into: buffer)
        }
        return result
    }

    /// Writes one blob's metadata record and data.
    private static func write(_ placement: Placement, into weights: UnsafeMutableRawBufferPointer) {
        let record = placement.offset
        let dataType: WeightBlobDataType = placement.widened ? .float32 : placement.blob.dataType
        weights.storeBytes(of: WeightFile.sentinel.littleEndian, toByteOffset: record, as: UInt32.self)
        weights.storeBytes(of: dataType.rawValue.littleEndian, toByteOffset: record + 4, as: UInt32.self)
        weights.storeBytes(of: UInt64(placement.byteCount).littleEndian, toByteOffset: record + 8, as: UInt64.self)
        let dataOffset = record + WeightFile.recordSize
        weights.storeBytes(of: UInt64(dataOffset).littleEndian, toByteOffset: record + 16, as: UInt64.self)
        let padding = placement.widened ? 0 : placement.blob.paddingBits
        weights.storeBytes(of: UInt64(padding).littleEndian, toByteOffset: record + 24, as: UInt64.self)
        let destination = weights.baseAddress!.advanced(by: dataOffset)
        placement.file.withUnsafeBytes(of: placement.blob) { source in
            if placement.widened {
                // Native floats: the little-endian layout on every platform Tessera builds for.
                WeightFile.widenHalves(
                    UnsafeRawBufferPointer(rebasing: source.prefix(2 * placement.blob.elementCount)),
                    into: destination.bindMemory(to: Float.self, capacity: placement.blob.elementCount))
            } else if let base = source.baseAddress {
                destination.copyMemory(from: base, byteCount: source.count)
            }
        }
    }

    /// Blobs safe to widen: every use is the `val` of a `const` op whose fp16 output is not
    /// returned by its block (Tessera computes floats in Float32, so only declared output
    /// types are observable).
    static func widenableReferences(_ program: MILProgram) -> Set<MILBlobReference> {
        var uses: [MILBlobReference: Int] = [:]
        var constUses: [MILBlobReference: Int] = [:]
        try? program.forEachBlobReference { reference, _ in uses[reference, default: 0] += 1 }
        var blocks = program.functions.values.flatMap { $0.blockSpecializations.values }
        while let block = blocks.popLast() {
            let returned = Set(block.outputs)
            for operation in block.operations {
                blocks.append(contentsOf: operation.blocks)
                guard operation.type == "const", operation.outputs.count == 1,
                    !returned.contains(operation.outputs[0].name),
                    operation.outputs[0].type.tensorType?.dataType == .float16,
                    let reference = operation.attributes["val"]?.blobReference
                else { continue }
                constUses[reference, default: 0] += 1
            }
        }
        return Set(constUses.filter { uses[$0.key] == $0.value }.keys)
    }

    /// A checksum of the source: its specification and every weight file, in name order.
    private static func sourceChecksum(specification: Data, package: CoreMLPackage) -> UInt64 {
        var hash = specification.withUnsafeBytes { CompiledModelChecksum.checksum($0) }
        for name in package.weightFiles.keys.sorted() {
            hash = package.weightFiles[name]!.data.withUnsafeBytes { CompiledModelChecksum.checksum($0, seed: hash) }
        }
        return hash
    }

    /// `value` rounded up to a multiple of `alignment`.
    static func align(_ value: Int, to alignment: Int) -> Int { (value + alignment - 1) / alignment * alignment }
}

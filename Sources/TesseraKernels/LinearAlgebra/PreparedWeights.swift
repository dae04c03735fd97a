import Synchronization

/// Packed forms of constant weights, made on a weight's first use and kept for as long as
/// its memory lives, so a model's convolutions pack their weights once, not once per
/// prediction.
///
/// Only memory nobody writes qualifies: storage adopted from the caller
/// (``TensorStorage/Owner/adopted(release:)``: a model's mapped `weight.bin` constants, an
/// `MLTensor(bytesNoCopy:)`, whose bytes must not change while a tensor uses them). Tessera's own
/// buffers may be written in place once uniquely referenced, a caller's wrapped memory is
/// written by the caller, and borrowed memory may be a view of either (a shaped array over a
/// multi-array's data pointer), so their operands are packed for each call instead
/// (``packed(_:offset:rows:depth:)`` returns `nil`).
///
/// An entry is found by the storage's identity, the weight's element offset and its shape,
/// and holds the storage weakly: a storage freed and another allocated at the same address
/// never sees the old entry, and entries of freed storage are dropped as new ones are added.
///
/// ```swift
/// if let packed = PreparedWeights.packed(weight.storage, offset: weight.layout.offset, rows: o, depth: c) { … }
/// ```
package enum PreparedWeights {
    private struct Key: Hashable {
        let storage: ObjectIdentifier
        let offset: Int
        let rows: Int
        let depth: Int
    }

    private struct Entry {
        weak var storage: TensorStorage?
        let packed: PackedGEMMOperand
    }

    private static let entries = Mutex<[Key: Entry]>([:])

    /// Whether weights in `storage` may be packed once and kept: nobody writes its memory.
    package static func isCacheable(_ storage: TensorStorage) -> Bool {
        switch storage.owner {
        case .adopted: true
        case .buffer, .allocated, .wrapped, .borrowed: false
        }
    }

    /// The packed form of the row-major `rows × depth` float32 matrix that starts `offset`
    /// elements into `storage`, packed on first use; `nil` when the storage does not qualify
    /// (``isCacheable(_:)``).
    ///
    /// - Precondition: The storage holds `offset + rows · depth` floats.
    package static func packed(_ storage: TensorStorage, offset: Int, rows: Int, depth: Int) -> PackedGEMMOperand? {
        guard isCacheable(storage) else { return nil }
        kernelPrecondition(
            (offset + rows * depth) * MemoryLayout<Float>.stride <= storage.byteCount,
            "[gemm] weight \(rows)×\(depth) at offset \(offset) overruns its storage (\(storage.byteCount) bytes)")
        let key = Key(storage: ObjectIdentifier(storage), offset: offset, rows: rows, depth: depth)
        if let found = entries.withLock({ table -> PackedGEMMOperand? in
            guard let entry = table[key], entry.storage === storage else { return nil }
            return entry.packed
        }) {
            return found
        }
        let weights = storage.pointer.assumingMemoryBound(to: Float.self) + offset
        let packed = PackedGEMMOperand(packing: weights, lda: depth, rows: rows, depth: depth)
        entries.withLock { table in
            table = table.filter { $0.value.storage != nil }
            table[key] = Entry(storage: storage, packed: packed)
        }
        return packed
    }

    /// The number of packed weights kept (for tests).
    package static var count: Int { entries.withLock { table in table.values.filter { $0.storage != nil }.count } }
}

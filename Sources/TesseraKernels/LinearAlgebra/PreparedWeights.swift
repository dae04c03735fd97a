import Synchronization

/// Packed forms of constant weights, made when a model loads (an op rule's `prepare`, from
/// `GraphExecutor.prepare`) or else on a weight's first use, and kept for as long as its memory
/// lives, so a model's convolutions and linear layers pack their weights once, never per
/// prediction.
///
/// Only memory nobody writes qualifies: storage adopted from the caller
/// (``TensorStorage/Owner/adopted(release:)``: a model's mapped `weight.bin` constants, an
/// `MLTensor(bytesNoCopy:)`, whose bytes must not change while a tensor uses them), and storage
/// borrowed from such storage (``TensorStorage/Owner/borrowed(keepAlive:)`` whose keep-alive
/// object is a qualifying ``TensorStorage``: a model's constants reach the graph as tensors
/// over the mapped weight's shaped array, which borrow its storage). Tessera's own buffers may
/// be written in place once uniquely referenced, a caller's wrapped memory is written by the
/// caller, and other borrowed memory may be a view of either (a shaped array over a
/// multi-array's data pointer), so their operands are packed for each call instead
/// (``packed(_:offset:rows:depth:)`` returns `nil`).
///
/// An entry is found by the adopted (root) storage's identity, the weight's element offset from
/// its start and its shape, and holds that storage weakly: a storage freed and another allocated
/// at the same address never sees the old entry, and entries of freed storage are dropped when
/// entries of another storage are added (the next model's weights).
///
/// ```swift
/// if let packed = PreparedWeights.packed(weight.storage, offset: weight.layout.offset, rows: o, depth: c) { … }
/// ```
package enum PreparedWeights {
    /// Which packed form an entry holds.
    enum Form: Hashable {
        /// ``PackedGEMMOperand``: a `rows × depth` row-major left operand.
        case left
        /// ``PackedGEMMRightOperand`` of a `depth × columns` right operand stored row-major with
        /// this row stride, or (`transposed`) as its `columns × depth` transpose with this row
        /// stride.
        case right(transposed: Bool, rowStride: Int)
        /// ``WinogradFilter`` of an `[O, C, 3, 3]` weight (`rows` O, `depth` C) for output tiles
        /// of this side.
        case winograd(tile: Int)
    }

    struct Key: Hashable {
        let storage: ObjectIdentifier
        /// Bytes from the root storage's start to the weight's first element.
        let offset: Int
        let rows: Int
        let depth: Int
        let form: Form
    }

    struct Entry {
        weak var storage: TensorStorage?
        let packed: any AnyObject & Sendable
    }

    /// A storage entries belong to, held weakly.
    struct Root {
        weak var storage: TensorStorage?
    }

    /// The kept forms, and the distinct storages they belong to: a model's weights lie in one or
    /// a few, so entries of freed storage are looked for only when the first entry of a storage
    /// not in the table arrives (another model's weights), and then by a look at each storage,
    /// not at every entry (a scan of every entry on every insertion was quadratic in a model's
    /// weights, and held the lock the preparation's threads share long enough for them to queue
    /// on it).
    struct Table {
        var entries: [Key: Entry] = [:]
        var roots: [ObjectIdentifier: Root] = [:]

        /// Adds `entry` for a weight in `root`. The first entry of a storage not in the table
        /// first drops the entries of storage freed since (also of one whose address the new
        /// storage now has); the table as it was is returned then, for the caller to release
        /// after the lock (the forms it drops may free a model's mapping).
        mutating func insert(_ entry: Entry, for key: Key, root: TensorStorage) -> [Key: Entry]? {
            let id = ObjectIdentifier(root)
            var before: [Key: Entry]?
            if roots[id]?.storage !== root {
                if roots[id] != nil || roots.values.contains(where: { $0.storage == nil }) {
                    before = entries
                    entries = entries.filter { $0.value.storage != nil }
                    roots = roots.filter { $0.value.storage != nil && $0.key != id }
                }
                roots[id] = Root(storage: root)
            }
            entries[key] = entry
            return before
        }
    }

    static let entries = Mutex<Table>(Table())

    /// Whether weights in `storage` may be packed once and kept: nobody writes its memory.
    package static func isCacheable(_ storage: TensorStorage) -> Bool { adoptedRoot(of: storage) != nil }

    /// The adopted storage whose memory `storage` is, directly or through borrowed views of it;
    /// `nil` for any other storage.
    static func adoptedRoot(of storage: TensorStorage) -> TensorStorage? {
        var current = storage
        // Views of views are rare; a few levels are enough and keep this bounded.
        for _ in 0..<8 {
            switch current.owner {
            case .adopted: return current
            case .borrowed(let keepAlive):
                guard let next = keepAlive as? TensorStorage else { return nil }
                current = next
            case .buffer, .allocated, .wrapped: return nil
            }
        }
        return nil
    }

    /// The packed form of the row-major `rows × depth` float32 matrix that starts `offset`
    /// elements into `storage`, packed on first use; `nil` when the storage does not qualify
    /// (``isCacheable(_:)``).
    ///
    /// - Precondition: The storage holds `offset + rows · depth` floats.
    package static func packed(_ storage: TensorStorage, offset: Int, rows: Int, depth: Int) -> PackedGEMMOperand? {
        kernelPrecondition(
            (offset + rows * depth) * MemoryLayout<Float>.stride <= storage.byteCount,
            "[gemm] weight \(rows)×\(depth) at offset \(offset) overruns its storage (\(storage.byteCount) bytes)")
        let found = cached(storage, offset: offset, rows: rows, depth: depth, form: .left) { weights in
            PackedGEMMOperand(packing: weights, lda: depth, rows: rows, depth: depth)
        }
        return found as? PackedGEMMOperand
    }

    /// The packed form of the `depth × columns` float32 right operand `B` that starts `offset`
    /// elements into `storage` — stored row-major with row stride `rowStride`, or, when
    /// `transposed`, as `Bᵀ` (`columns × depth`, a linear layer's `[out, in]` weight) row-major
    /// with row stride `rowStride` — packed on first use; `nil` when the storage does not
    /// qualify (``isCacheable(_:)``).
    ///
    /// - Precondition: The storage holds every element the operand reaches; `rowStride` is at
    ///   least the stored rows' length.
    package static func packedRight(
        _ storage: TensorStorage, offset: Int, depth: Int, columns: Int, rowStride: Int, transposed: Bool
    ) -> PackedGEMMRightOperand? {
        let (storedRows, storedColumns) = transposed ? (columns, depth) : (depth, columns)
        kernelPrecondition(
            rowStride >= storedColumns
                && (storedRows == 0 || storedColumns == 0
                    || (offset + (storedRows - 1) * rowStride + storedColumns) * MemoryLayout<Float>.stride
                        <= storage.byteCount),
            "[gemm] weight \(depth)×\(columns) (row stride \(rowStride)) at offset \(offset) overruns its storage "
                + "(\(storage.byteCount) bytes)")
        let form = Form.right(transposed: transposed, rowStride: rowStride)
        let found = cached(storage, offset: offset, rows: columns, depth: depth, form: form) { weights in
            PackedGEMMRightOperand(
                packing: weights, rowStride: rowStride, transposed: transposed, depth: depth, columns: columns)
        }
        return found as? PackedGEMMRightOperand
    }

    /// The Winograd-transformed filter (``WinogradFilter``) of the contiguous
    /// `[outputChannels, inputChannels, 3, 3]` float32 weight that starts `offset` elements into
    /// `storage`, for output tiles of `tile × tile`, transformed on first use; `nil` when the
    /// storage does not qualify (``isCacheable(_:)``).
    ///
    /// - Precondition: The storage holds `offset + outputChannels · inputChannels · 9` floats;
    ///   `tile` is 2 or 4.
    package static func winograd(
        _ storage: TensorStorage, offset: Int, outputChannels: Int, inputChannels: Int, tile: Int
    ) -> WinogradFilter? {
        kernelPrecondition(
            (offset + outputChannels * inputChannels * 9) * MemoryLayout<Float>.stride <= storage.byteCount,
            "[conv2d] weight \(outputChannels)×\(inputChannels)×3×3 at offset \(offset) overruns its storage "
                + "(\(storage.byteCount) bytes)")
        let found = cached(
            storage, offset: offset, rows: outputChannels, depth: inputChannels, form: .winograd(tile: tile)
        ) { weights in
            WinogradFilter(
                transforming: weights, outputChannels: outputChannels, inputChannels: inputChannels, tile: tile)
        }
        return found as? WinogradFilter
    }

    /// The entry for these elements of `storage`'s adopted root, made by `pack` on first use.
    private static func cached(
        _ storage: TensorStorage, offset: Int, rows: Int, depth: Int, form: Form,
        pack: (UnsafePointer<Float>) -> any AnyObject & Sendable
    ) -> (any AnyObject & Sendable)? {
        guard let root = adoptedRoot(of: storage) else { return nil }
        let weights = storage.pointer.assumingMemoryBound(to: Float.self) + offset
        let rootOffset = UnsafeRawPointer(weights) - UnsafeRawPointer(root.pointer)
        let key = Key(storage: ObjectIdentifier(root), offset: rootOffset, rows: rows, depth: depth, form: form)
        if let found = entries.withLock({ table -> (any AnyObject & Sendable)? in
            guard let entry = table.entries[key], entry.storage === root else { return nil }
            return entry.packed
        }) {
            return found
        }
        // A compiled model's stored form (``register(_:base:keepAlive:)``), else packed now.
        let stored = storedForm(at: UnsafeRawPointer(weights), rows: rows, depth: depth, form: form)
        if stored == nil { MissCounter.current?.count.add(1, ordering: .relaxed) }
        let packed = stored ?? pack(UnsafePointer(weights))
        let dropped = entries.withLock { table in
            table.insert(Entry(storage: root, packed: packed), for: key, root: root)
        }
        withExtendedLifetime(dropped) {}  // released here, after the lock
        return packed
    }

    /// Counts the packed forms made (weights not found prepared) by the task that runs
    /// ``countingMisses(_:)``'s body, on its own thread: a test's view of whether a prediction
    /// packed anything, unaffected by other tests running at the same time.
    final class MissCounter: Sendable {
        let count = Atomic<Int>(0)
        @TaskLocal static var current: MissCounter?
    }

    /// Runs `body` and returns its result with the number of weights it packed because they
    /// were not prepared yet (made on this task's thread; for tests: a prediction after a model
    /// prepared its weights at load packs none).
    ///
    /// ```swift
    /// let (_, misses) = try await PreparedWeights.countingMisses { try await model.prediction(from: input) }
    /// ```
    package static func countingMisses<Result>(
        _ body: () async throws -> Result
    ) async rethrows -> (result: Result, misses: Int) {
        let counter = MissCounter()
        let result = try await MissCounter.$current.withValue(counter, operation: body)
        return (result, counter.count.load(ordering: .relaxed))
    }

    /// Runs a body under the miss counter of the task that asks (``countingMisses(_:)``), on
    /// whichever thread it runs: how work spread over the kernel workers (the preparation at
    /// load) counts its packing for the task that started it.
    package static var currentMissCounting: @Sendable (() -> Void) -> Void {
        let counter = MissCounter.current
        return { body in MissCounter.$current.withValue(counter, operation: body) }
    }

    /// The number of packed weights kept (for tests).
    package static var count: Int {
        entries.withLock { table in table.entries.values.filter { $0.storage != nil }.count }
    }
}

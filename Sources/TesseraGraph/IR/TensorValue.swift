import TesseraKernels

/// Memory that holds a tensor's elements, kept alive by reference.
///
/// Either a buffer from the ``BufferPool`` (results of computation) or memory adopted from
/// outside with a release action (`bytesNoCopy` initializers, shaped arrays handed over
/// without a copy).
public final class TensorStorage: @unchecked Sendable {
    /// The start of the memory.
    public let pointer: UnsafeMutableRawPointer
    /// The number of bytes.
    public let byteCount: Int
    private let buffer: AlignedBuffer?
    private let release: (@Sendable () -> Void)?
    /// Whether this storage frees `pointer` (``init(takingOwnershipOf:byteCount:)``).
    private let ownsMemory: Bool

    /// Storage backed by a pool (or unpooled) buffer.
    public init(buffer: AlignedBuffer) {
        pointer = buffer.pointer
        byteCount = buffer.byteCount
        self.buffer = buffer
        release = nil
        ownsMemory = false
    }

    /// Storage that takes over memory allocated with `UnsafeMutableRawPointer.allocate` and
    /// deallocates it when freed.
    package init(takingOwnershipOf pointer: UnsafeMutableRawPointer, byteCount: Int) {
        self.pointer = pointer
        self.byteCount = byteCount
        buffer = nil
        release = nil
        ownsMemory = true
    }

    /// Storage that adopts outside memory; `release` runs when the storage is freed.
    public init(adopting pointer: UnsafeMutableRawPointer, byteCount: Int, release: (@Sendable () -> Void)?) {
        self.pointer = pointer
        self.byteCount = byteCount
        buffer = nil
        self.release = release
        ownsMemory = false
    }

    /// Allocates `count` elements of `type` from the shared pool.
    ///
    /// Traps (with the pool's message) when the pool's memory limit refuses: MLTensor
    /// operations are non-throwing by contract.
    public static func allocate(count: Int, type: KernelScalarType) -> TensorStorage {
        do {
            return TensorStorage(buffer: try BufferPool.shared.allocate(byteCount: count * type.byteCount))
        } catch {
            kernelFailure("[MLTensor] \(error)")
        }
    }

    deinit {
        if ownsMemory { pointer.deallocate() }
        release?()
    }
}

/// A tensor's elements in memory: storage plus a strided layout into it.
public struct TensorValue: @unchecked Sendable {
    /// The memory (kept alive by this value).
    public private(set) var storage: TensorStorage
    /// Where the elements are, in elements of `type` from `storage.pointer`.
    public let layout: StridedLayout
    /// The element type.
    public let type: KernelScalarType

    /// Elements of `type` at `layout` inside `storage` (no copy).
    public init(storage: TensorStorage, layout: StridedLayout, type: KernelScalarType) {
        self.storage = storage
        self.layout = layout
        self.type = type
    }

    /// Whether this value holds the only reference to its storage (no other value or view
    /// shares it), so the storage may be overwritten.
    mutating func hasUniqueStorage() -> Bool {
        isKnownUniquelyReferenced(&storage)
    }

    /// The base pointer layouts are relative to.
    public var pointer: UnsafeRawPointer { UnsafeRawPointer(storage.pointer) }

    /// Whether the elements are row-major with no gaps, starting at offset 0.
    public var isCompact: Bool { layout.offset == 0 && layout.isContiguous }

    /// The same elements with another layout over the same storage.
    public func with(layout: StridedLayout) -> TensorValue {
        TensorValue(storage: storage, layout: layout, type: type)
    }

    /// A compact copy (or this value when already compact).
    public func compacted() -> TensorValue {
        if isCompact { return self }
        let out = TensorStorage.allocate(count: layout.count, type: type)
        CopyKernels.copy(from: pointer, layout: layout, elementSize: type.byteCount, to: out.pointer)
        return TensorValue(storage: out, layout: StridedLayout(contiguous: layout.shape), type: type)
    }
}

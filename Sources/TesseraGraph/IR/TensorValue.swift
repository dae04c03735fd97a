import TesseraKernels

/// A tensor's elements in memory: storage plus a strided layout into it.
package struct TensorValue: @unchecked Sendable {
    /// The memory (kept alive by this value).
    package private(set) var storage: TensorStorage
    /// Where the elements are, in elements of `type` from `storage.pointer`.
    package let layout: StridedLayout
    /// The element type.
    package let type: KernelScalarType

    /// Elements of `type` at `layout` inside `storage` (no copy).
    package init(storage: TensorStorage, layout: StridedLayout, type: KernelScalarType) {
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
    package var pointer: UnsafeRawPointer { UnsafeRawPointer(storage.pointer) }

    /// Whether the elements are row-major with no gaps, starting at offset 0.
    package var isCompact: Bool { layout.offset == 0 && layout.isContiguous }

    /// The same elements with another layout over the same storage.
    package func with(layout: StridedLayout) -> TensorValue {
        TensorValue(storage: storage, layout: layout, type: type)
    }

    /// A compact copy (or this value when already compact).
    package func compacted() -> TensorValue {
        if isCompact { return self }
        let out = TensorStorage.allocate(count: layout.count, type: type)
        CopyKernels.copy(from: pointer, layout: layout, elementSize: type.byteCount, to: out.pointer)
        return TensorValue(storage: out, layout: StridedLayout(contiguous: layout.shape), type: type)
    }
}

import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Memory for the prepared forms of constant weights that are kept with a model
/// (``PreparedWeights``: packed GEMM panels and strips, Winograd-transformed filters).
///
/// A model's prepared forms are megabytes written once, at load, into memory never touched
/// before; with 4 KiB pages every page costs a fault of its own when first written, which on
/// some machines (virtualized ones above all) takes several microseconds, more than packing the
/// page. So on Linux the forms are carved out of regions backed by transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`, 2 MiB aligned): one fault per 2 MiB. Small forms share 4 MiB
/// regions, handed out in order; a form larger than half a region gets a region of its own. A
/// region lives until the last form in it is released. Elsewhere, or when the mapping fails,
/// each form gets an ordinary 64-byte-aligned allocation.
///
/// Only forms kept with a model come from here: a weight packed for one call alone uses an
/// ordinary buffer (a region's memory is not reused until the whole region is released).
///
/// ```swift
/// let (pointer, owner) = KeptWeightMemory.allocate(byteCount: 1 << 20)   // keep `owner` alive
/// ```
package enum KeptWeightMemory {
    /// The size of a transparent huge page on x86-64 and of the default one on arm64 Linux.
    static let hugePageSize = 2 << 20
    /// The size of a region shared by small forms.
    static let regionSize = 4 << 20

    /// The region small forms are being carved from, and the bytes of it handed out.
    private static let current = Mutex<(region: Region?, used: Int)>((nil, 0))

    /// `byteCount` bytes (at least 1), 64-byte aligned, and the object that keeps them alive.
    package static func allocate(byteCount: Int) -> (pointer: UnsafeMutableRawPointer, owner: AnyObject) {
        let size = (Swift.max(byteCount, 1) + 63) & ~63
        if size > regionSize / 2 {
            let region = Region(byteCount: size)
            return (region.start, region)
        }
        return current.withLock { state in
            if state.region == nil || state.used + size > regionSize {
                state = (Region(byteCount: regionSize), 0)
            }
            let region = state.region!
            defer { state.used += size }
            return (region.start + state.used, region)
        }
    }

    /// Memory for a prepared form: from ``allocate(byteCount:)`` when the form is `kept` with a
    /// model, else an ordinary buffer of its own (``AlignedBuffer``).
    package static func allocate(byteCount: Int, kept: Bool) -> (
        pointer: UnsafeMutableRawPointer, owner: AnyObject
    ) {
        if kept { return allocate(byteCount: byteCount) }
        let buffer = AlignedBuffer(unpooledByteCount: byteCount)
        return (buffer.pointer, buffer)
    }

    /// One mapping (or, where huge pages are not available, one allocation).
    final class Region: @unchecked Sendable {
        // `@unchecked`: the memory is handed out in disjoint pieces, each written by one packer
        // before it is shared, and released only in `deinit`.

        /// The first usable byte: 2 MiB aligned for a mapping, 64 for an allocation.
        let start: UnsafeMutableRawPointer
        /// The mapping and its size, or `nil` for an allocation.
        private let mapping: (base: UnsafeMutableRawPointer, size: Int)?

        /// A region of at least `byteCount` bytes.
        init(byteCount: Int) {
            #if os(Linux)
                let huge = KeptWeightMemory.hugePageSize
                let usable = (byteCount + huge - 1) / huge * huge
                // One huge page more than needed, so that a 2 MiB-aligned start fits inside.
                let size = usable + huge
                if let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                    base != MAP_FAILED
                {
                    let aligned = (Int(bitPattern: base) + huge - 1) / huge * huge
                    start = UnsafeMutableRawPointer(bitPattern: aligned)!
                    _ = madvise(start, usable, Int32(MADV_HUGEPAGE))
                    mapping = (base, size)
                    return
                }
            #endif
            start = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
            mapping = nil
        }

        deinit {
            #if os(Linux)
                if let mapping {
                    munmap(mapping.base, mapping.size)
                    return
                }
            #endif
            start.deallocate()
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A whole file mapped read-only into memory, or (``init(copying:)``, ``init(zeroedByteCount:fill:)``)
/// a file's bytes in memory, in a page-aligned buffer so sections keep the alignment a mapping
/// has. The
/// bytes live as long as the longest-lived `Data` made from them with ``data(in:)``, so weight
/// files made from sections keep them alive.
final class MappedFile: @unchecked Sendable {
    /// The mapped bytes.
    let bytes: UnsafeRawBufferPointer
    /// Whether ``bytes`` is an allocation of ``init(copying:)`` or ``init(zeroedByteCount:fill:)``
    /// (freed, not unmapped).
    private let isCopy: Bool

    /// Maps `url`.
    ///
    /// - Throws: ``MLModelError`` `.io` when the file cannot be opened or mapped.
    init(_ url: URL, name: String) throws {
        isCopy = false
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else {
            throw MLModelError(.io, "cannot load \(name): cannot open \(url.lastPathComponent) (errno \(errno))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw MLModelError(.io, "cannot load \(name): cannot read the size of \(url.lastPathComponent)")
        }
        let size = Int(status.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw MLModelError(.io, "cannot load \(name): cannot map \(url.lastPathComponent) (errno \(errno))")
        }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    /// The bytes of a file already in memory (a compiled model loaded from bytes), copied.
    init(copying data: Data) {
        isCopy = true
        guard !data.isEmpty else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count, alignment: 4096)
        data.copyBytes(to: copy)
        bytes = UnsafeRawBufferPointer(copy)
    }

    /// `byteCount` zeroed bytes in page-aligned memory, written by `fill` (a compiled model being
    /// made, which ``CompiledModelReader`` then reads as it reads a mapped file).
    init(zeroedByteCount byteCount: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        isCopy = true
        guard byteCount > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: byteCount, alignment: 4096)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        fill(buffer)
        bytes = UnsafeRawBufferPointer(buffer)
    }

    deinit {
        guard let base = bytes.baseAddress else { return }
        if isCopy {
            base.deallocate()
        } else {
            munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
        }
    }

    /// A `Data` over `range` of the mapping, without copying; it keeps the mapping alive.
    func data(in range: Range<Int>) -> Data {
        guard let base = bytes.baseAddress, !range.isEmpty else { return Data() }
        return Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: base + range.lowerBound), count: range.count,
            deallocator: .custom { _, _ in withExtendedLifetime(self) {} })
    }
}

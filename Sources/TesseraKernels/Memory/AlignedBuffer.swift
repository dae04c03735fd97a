/// A 64-byte-aligned block of raw memory that kernels read and write.
///
/// A buffer taken from a ``BufferPool`` goes back to that pool when the last reference to it
/// is released; one made with ``init(unpooledByteCount:)`` is freed. The memory is
/// uninitialized when handed out.
///
/// `AlignedBuffer` is `Sendable` because it never touches its memory itself: whoever holds it
/// decides who writes when (the graph writes a buffer once, then only reads it).
///
/// ```swift
/// let buffer = try BufferPool.shared.allocate(byteCount: 1024 * MemoryLayout<Float>.stride)
/// let floats = buffer.pointer.bindMemory(to: Float.self, capacity: 1024)
/// ```
@usableFromInline package final class AlignedBuffer: @unchecked Sendable {
    /// The alignment of every buffer, in bytes: one cache line, enough for any SIMD load.
    @usableFromInline package static let alignment = 64

    /// The start of the memory.
    @usableFromInline package let pointer: UnsafeMutableRawPointer
    /// The number of bytes asked for.
    @usableFromInline package let byteCount: Int
    /// The number of bytes actually reserved (the pool's size class), at least `byteCount`.
    @usableFromInline package let capacity: Int
    @usableFromInline let pool: BufferPool?

    init(pointer: UnsafeMutableRawPointer, byteCount: Int, capacity: Int, pool: BufferPool?) {
        self.pointer = pointer
        self.byteCount = byteCount
        self.capacity = capacity
        self.pool = pool
    }

    /// Allocates a buffer outside any pool; it is freed when released.
    ///
    /// - Precondition: `byteCount >= 0`.
    @usableFromInline package convenience init(unpooledByteCount byteCount: Int) {
        kernelPrecondition(byteCount >= 0, "[AlignedBuffer] negative byte count \(byteCount)")
        let capacity = Swift.max(byteCount, 1)
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: AlignedBuffer.alignment)
        self.init(pointer: pointer, byteCount: byteCount, capacity: capacity, pool: nil)
    }

    deinit {
        if let pool {
            pool.recycle(pointer, capacity: capacity)
        } else {
            pointer.deallocate()
        }
    }

    /// The memory bound to `T`, for `byteCount / MemoryLayout<T>.stride` elements.
    @inlinable
    package func typedPointer<T>(_: T.Type) -> UnsafeMutablePointer<T> {
        pointer.bindMemory(to: T.self, capacity: byteCount / MemoryLayout<T>.stride)
    }
}

import Foundation

/// Kernels that move elements without looking at their values: materialising strided views,
/// concatenation and splitting, padding, gathers and scatters, tiling and fills.
///
/// Copies are type-agnostic. Every kernel takes an `elementSize` of 1, 2, 4 or 8 bytes (a
/// ``KernelScalarType``'s ``KernelScalarType/byteCount``) and moves whole elements, so one
/// implementation serves every scalar type; the inner loops are specialised once per element
/// size. Inputs are read through a ``StridedLayout`` (any strides: transposed, broadcast with
/// stride 0, sliced, reversed); outputs are written contiguously in row-major order unless a
/// kernel says otherwise. Input and output memory must not overlap.
///
/// ```swift
/// // Materialise the transpose of a contiguous [2, 3] float32 matrix.
/// let layout = StridedLayout(contiguous: [2, 3]).permuted([1, 0])
/// CopyKernels.copy(from: src, layout: layout, elementSize: 4, to: dst)   // dst is [3, 2]
/// ```
///
/// Programmer errors (mismatched shapes, bad axes, out-of-range indices) trap with a message
/// that starts with the kernel's name in brackets, e.g. `[concatenate] ...`.
package enum CopyKernels {}

/// A fixed-size trivial type the copy loops move elements as: one per supported element size.
@usableFromInline
protocol CopyWord: FixedWidthInteger, UnsignedInteger, BitwiseCopyable, SIMDScalar, Codable {}

extension UInt8: CopyWord {}
extension UInt16: CopyWord {}
extension UInt32: CopyWord {}
extension UInt64: CopyWord {}

/// A copy loop written once, generic over the word type; ``CopyKernels/dispatch(_:elementSize:op:)``
/// picks the word for the element size once per call.
protocol CopyWordKernel {
    func run<W: CopyWord>(_ word: W.Type)
}

extension CopyKernels {
    /// Estimated cost of moving one byte with `memcpy` (about 20 GB/s on one core).
    static let nanosecondsPerByte = 0.05
    /// Estimated cost of one element read or written through a non-unit stride.
    static let nanosecondsPerStridedElement = 0.6

    /// Traps unless `elementSize` is 1, 2, 4 or 8.
    static func checkElementSize(_ elementSize: Int, op: String) {
        kernelPrecondition(
            elementSize == 1 || elementSize == 2 || elementSize == 4 || elementSize == 8,
            "[\(op)] element size must be 1, 2, 4 or 8 bytes, got \(elementSize)")
    }

    /// Runs `kernel` with the word type whose size is `elementSize`.
    static func dispatch<K: CopyWordKernel>(_ kernel: K, elementSize: Int, op: String) {
        switch elementSize {
        case 1: kernel.run(UInt8.self)
        case 2: kernel.run(UInt16.self)
        case 4: kernel.run(UInt32.self)
        case 8: kernel.run(UInt64.self)
        default: checkElementSize(elementSize, op: op)
        }
    }

    /// `axis` with negative values counted from the end, after checking it is in `-rank..<rank`.
    static func normalizedAxis(_ axis: Int, rank: Int, shape: [Int], op: String) -> Int {
        kernelPrecondition(
            axis >= -rank && axis < rank, "[\(op)] axis \(axis) is out of range for shape \(shape) (rank \(rank))")
        return axis < 0 ? axis + rank : axis
    }

    /// The product of `shape[range]` (1 for an empty range).
    @inline(__always)
    static func product(_ shape: [Int], _ range: Range<Int>) -> Int {
        var result = 1
        for axis in range { result *= shape[axis] }
        return result
    }
}

// MARK: - Fill

extension CopyKernels {
    /// Writes the same element `count` times, contiguously.
    ///
    /// The element is the low `elementSize` bytes of `bitPattern`, in the machine's (little-endian)
    /// byte order: pass `UInt64(Float(1).bitPattern)` for a float32 one, `0` for zeros of any
    /// type, `UInt64(Float16(0.5).bitPattern)` for a float16 half.
    ///
    /// ```swift
    /// CopyKernels.fill(out, count: 1024, elementSize: 4, bitPattern: UInt64(Float(1).bitPattern))
    /// ```
    ///
    /// - Parameters:
    ///   - to: The destination; `count × elementSize` bytes are written.
    ///   - count: The number of elements; nothing is written when it is 0.
    ///   - elementSize: 1, 2, 4 or 8.
    ///   - bitPattern: The element's bits in the low `elementSize` bytes; higher bytes are ignored.
    /// - Precondition: `count >= 0` and `elementSize` is 1, 2, 4 or 8.
    package static func fill(_ to: UnsafeMutableRawPointer, count: Int, elementSize: Int, bitPattern: UInt64) {
        checkElementSize(elementSize, op: "fill")
        kernelPrecondition(count >= 0, "[fill] negative element count \(count)")
        if count == 0 { return }
        dispatch(Fill(to: to, count: count, bitPattern: bitPattern), elementSize: elementSize, op: "fill")
    }

    struct Fill: CopyWordKernel {
        let to: UnsafeMutableRawPointer
        let count: Int
        let bitPattern: UInt64

        func run<W: CopyWord>(_: W.Type) {
            let value = W(truncatingIfNeeded: bitPattern)
            let size = MemoryLayout<W>.size
            let cost = ParallelCost(nanosecondsPerItem: CopyKernels.nanosecondsPerByte * Double(size))
            parallelFor(count: count, cost: cost, alignment: 64) { range in
                CopyKernels.fillRun(to + range.lowerBound * size, count: range.count, value: value)
            }
        }
    }

    /// Fills `count` contiguous words with `value` (serial).
    @inline(__always)
    static func fillRun<W: CopyWord>(_ to: UnsafeMutableRawPointer, count: Int, value: W) {
        if value == 0 || W.self == UInt8.self {
            _ = memset(to, Int32(truncatingIfNeeded: value), count * MemoryLayout<W>.size)
            return
        }
        let size = MemoryLayout<W>.size
        for i in 0..<count { to.storeBytes(of: value, toByteOffset: i * size, as: W.self) }
    }
}

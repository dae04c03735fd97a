import Foundation
import TesseraKernels

/// The storage and layout shared by ``MLShapedArray`` and ``MLShapedArraySlice``.
/// **Tessera-internal**: public only because ``_MLShapedArrayCoreBacked`` names it; its
/// members are internal.
///
/// A core is a view: the elements of `storage` that `layout` selects (shape, element strides,
/// element offset). Strides are never negative, so the first element `[0, 0, …]` is also the
/// lowest address. Every mutation goes through ``makeUnique()`` first.
public struct _ShapedArrayCore<Scalar: MLShapedArrayScalar>: Sendable {
    var storage: TensorStorage
    var layout: StridedLayout

    init(storage: TensorStorage, layout: StridedLayout) {
        self.storage = storage
        self.layout = layout
    }

    /// Bytes per element.
    static var elementSize: Int { MemoryLayout<Scalar>.stride }

    /// A contiguous row-major core of `shape` with uninitialized memory.
    init(uninitializedShape shape: [Int], op: @autoclosure () -> String) {
        let count = _ShapedArrayCore.checkedCount(shape, op: op())
        let storage = TensorStorage.allocateUnpooled(byteCount: count * _ShapedArrayCore.elementSize)
        storage.pointer.bindMemory(to: Scalar.self, capacity: count)
        self.init(storage: storage, layout: StridedLayout(contiguous: shape))
    }

    /// The number of elements of `shape`, after checking no dimension is negative and the
    /// product does not overflow.
    static func checkedCount(_ shape: [Int], op: @autoclosure () -> String) -> Int {
        kernelPrecondition(shape.allSatisfy { $0 >= 0 }, "[\(op())] negative dimension in shape \(shape)")
        let elements = shape.checkedElementCount
        kernelPrecondition(elements != nil, "[\(op())] shape \(shape) has too many elements")
        let count = elements!
        let (bytes, overflow) = count.multipliedReportingOverflow(by: elementSize)
        kernelPrecondition(!overflow && bytes >= 0, "[\(op())] shape \(shape) has too many bytes")
        return count
    }

    /// The base of the storage as typed memory (offsets are measured from here).
    var base: UnsafeMutablePointer<Scalar> { storage.pointer.assumingMemoryBound(to: Scalar.self) }

    var shape: [Int] { layout.shape }
    var strides: [Int] { layout.strides }
    var rank: Int { layout.rank }
    var scalarCount: Int { layout.count }

    /// The number of elements from the first element to the last one the layout reaches,
    /// inclusive: the length of the buffer `withUnsafeShapedBufferPointer` hands out.
    var span: Int {
        guard let range = layout.elementRange else { return 0 }
        return range.upperBound - layout.offset + 1
    }

    /// Copies into fresh contiguous storage unless this core is the memory's only, writable owner.
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) || !storage.isOwned {
            self = contiguousCopy()
        }
    }

    /// The same elements in fresh, contiguous row-major storage.
    func contiguousCopy() -> _ShapedArrayCore {
        let copy = _ShapedArrayCore(uninitializedShape: shape, op: "copy")
        copyScalars(into: copy.base)
        return copy
    }

    /// This core if its layout is contiguous row-major, otherwise a contiguous copy.
    func contiguous() -> _ShapedArrayCore {
        layout.isContiguous ? self : contiguousCopy()
    }

    /// Writes the elements in row-major order to `destination` (`scalarCount` elements).
    func copyScalars(into destination: UnsafeMutablePointer<Scalar>) {
        let count = scalarCount
        if count == 0 { return }
        if layout.isContiguous {
            destination.update(from: base + layout.offset, count: count)
        } else {
            withExtendedLifetime(storage) {
                CopyKernels.copy(
                    from: UnsafeRawPointer(storage.pointer), layout: layout, elementSize: _ShapedArrayCore.elementSize,
                    to: UnsafeMutableRawPointer(destination))
            }
        }
    }

    /// The elements in row-major order.
    var scalars: [Scalar] {
        let count = scalarCount
        return [Scalar](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let address = buffer.baseAddress { copyScalars(into: address) }
            initialized = count
        }
    }

    /// Overwrites the elements, in row-major order, from `source` (`scalarCount` elements).
    /// The caller has called ``makeUnique()``; `source` must not alias this storage.
    func writeScalars(from source: UnsafePointer<Scalar>) {
        let count = scalarCount
        if count == 0 { return }
        if layout.isContiguous {
            (base + layout.offset).update(from: source, count: count)
            return
        }
        let base = self.base
        forEachRow { linear, offset, length, stride in
            for i in 0..<length { base[offset + i * stride] = source[linear + i] }
        }
    }

    /// Calls `body` once per innermost row of the layout with the row's row-major position,
    /// its storage offset, its length and its stride. A rank-0 layout is one row of length 1.
    func forEachRow(_ body: (_ linear: Int, _ offset: Int, _ length: Int, _ stride: Int) -> Void) {
        layout.forEachRow(body)
    }

    /// The storage offset of the element at `indices` (one per axis).
    func offset<C: Collection>(of indices: C, op: @autoclosure () -> String) -> Int where C.Element == Int {
        kernelPrecondition(
            indices.count == rank,
            "[\(op())] \(indices.count) indices \(Array(indices)) for shape \(shape) (rank \(rank))")
        var offset = layout.offset
        var axis = 0
        for index in indices {
            kernelPrecondition(
                index >= 0 && index < layout.shape[axis],
                "[\(op())] index \(Array(indices)) is out of range for shape \(shape)")
            offset += index * layout.strides[axis]
            axis += 1
        }
        return offset
    }
}

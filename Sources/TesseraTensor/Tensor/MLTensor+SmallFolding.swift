import Foundation
import TesseraGraph
import TesseraKernels

/// Constant folding of small element-wise ops at build time.
///
/// A `Float` element-wise op whose operands are already materialized (leaves: tensors made
/// from scalars, shaped arrays or earlier materializations) and whose result has at most
/// ``smallFoldingLimit`` elements is computed when it is built, on the calling thread, and
/// returns a materialized tensor. Building, collecting, planning and freeing one graph node
/// costs about a microsecond; computing 256 floats costs a few nanoseconds, so deferring
/// such an op only adds overhead, and there is nothing to fuse that would save a pass over
/// memory.
///
/// The arithmetic is the fused interpreter's own per-block code
/// (`ElementwiseKernels.smallBinary` / `smallUnary`), so a folded result is bit-identical to
/// the one the same op would get inside a fused program.
///
/// ```swift
/// var x = MLTensor([1, 2, 3, 4] as [Float])   // materialized leaf
/// x = x * 1.5 + 0.25                           // both ops computed here; no graph is built
/// ```
extension MLTensor {
    /// The most elements a build-time folded op may produce: 256 (1 KB of `Float`).
    /// `TESSERA_FOLD_LIMIT` overrides it (`0` turns folding off, for profiling the graph).
    package static let smallFoldingLimit: Int =
        ProcessInfo.processInfo.environment["TESSERA_FOLD_LIMIT"].flatMap { Int($0) } ?? 256

    /// `op(lhs, rhs)` computed now, or `nil` when the op must go into the graph (an operand is
    /// pending, not `Float`, not compact, the result is large, or the shapes need more than a
    /// single-element broadcast).
    static func foldedBinary(_ op: BinaryOp, _ lhs: MLTensor, _ rhs: MLTensor) -> MLTensor? {
        guard lhs.kernelType == .float32, rhs.kernelType == .float32, !op.producesBool else { return nil }
        let lhsCount = lhs.scalarCount
        let rhsCount = rhs.scalarCount
        guard lhsCount > 0, rhsCount > 0, Swift.max(lhsCount, rhsCount) <= smallFoldingLimit else { return nil }
        let shape: [Int]
        if lhs.node.shape == rhs.node.shape {
            shape = lhs.node.shape
        } else if rhsCount == 1 && rhs.rank <= lhs.rank {
            shape = lhs.node.shape
        } else if lhsCount == 1 && lhs.rank <= rhs.rank {
            shape = rhs.node.shape
        } else {
            return nil
        }
        guard let a = lhs.node.leafValue ?? lhs.node.value, let b = rhs.node.leafValue ?? rhs.node.value,
            let aStart = a.compactStart(count: lhsCount), let bStart = b.compactStart(count: rhsCount)
        else { return nil }
        let count = Swift.max(lhsCount, rhsCount)
        let storage = TensorStorage(unpooledByteCount: count * MemoryLayout<Float>.stride)
        ElementwiseKernels.smallBinary(
            op, lhs: aStart, lhsIsScalar: lhsCount == 1 && count > 1, rhs: bStart,
            rhsIsScalar: rhsCount == 1 && count > 1,
            output: storage.pointer.assumingMemoryBound(to: Float.self), count: count)
        // A compact operand of the result's shape lends its layout (no new strides array).
        let layout =
            a.isCompact && a.layout.shape == shape
            ? a.layout : b.isCompact && b.layout.shape == shape ? b.layout : StridedLayout(contiguous: shape)
        return withExtendedLifetime((a, b)) {
            MLTensor(value: TensorValue(storage: storage, layout: layout, type: .float32))
        }
    }

    /// `op(self)` computed now, or `nil` when it must go into the graph (see
    /// ``foldedBinary(_:_:_:)``).
    func foldedUnary(_ op: UnaryOp) -> MLTensor? {
        guard kernelType == .float32 else { return nil }
        let count = scalarCount
        guard count > 0, count <= MLTensor.smallFoldingLimit, let value = node.leafValue ?? node.value,
            let start = value.compactStart(count: count)
        else { return nil }
        let storage = TensorStorage(unpooledByteCount: count * MemoryLayout<Float>.stride)
        ElementwiseKernels.smallUnary(
            op, input: start, output: storage.pointer.assumingMemoryBound(to: Float.self), count: count)
        let layout = value.isCompact ? value.layout : StridedLayout(contiguous: shape)
        return withExtendedLifetime(value) {
            MLTensor(value: TensorValue(storage: storage, layout: layout, type: .float32))
        }
    }
}

extension TensorValue {
    /// The first of `count` row-major `Float` elements with no gaps (any layout of one
    /// element qualifies), or `nil` for another layout.
    fileprivate func compactStart(count: Int) -> UnsafePointer<Float>? {
        guard count == 1 || layout.isContiguous else { return nil }
        return (pointer + layout.offset * MemoryLayout<Float>.stride).assumingMemoryBound(to: Float.self)
    }
}

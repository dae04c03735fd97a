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
        let count = Swift.max(lhsCount, rhsCount)
        // The operands are parameters, alive for the whole call, and so are their nodes'
        // elements: a leaf's address is read without copying its value.
        if let a = lhs.node.leafElements, let b = rhs.node.leafElements {
            return folded(op, a, lhsCount == 1 && count > 1, b, rhsCount == 1 && count > 1, count, shape)
        }
        guard let a = compactValue(lhs.node, count: lhsCount), let b = compactValue(rhs.node, count: rhsCount) else {
            return nil
        }
        return withExtendedLifetime(a) {
            withExtendedLifetime(b) {
                folded(
                    op, a.firstElement, lhsCount == 1 && count > 1, b.firstElement, rhsCount == 1 && count > 1, count,
                    shape)
            }
        }
    }

    /// A new leaf holding `op` applied to `count` elements from `lhs` and `rhs` (a scalar
    /// operand supplies its one element to every position).
    private static func folded(
        _ op: BinaryOp, _ lhs: UnsafeRawPointer, _ lhsIsScalar: Bool, _ rhs: UnsafeRawPointer, _ rhsIsScalar: Bool,
        _ count: Int, _ shape: [Int]
    ) -> MLTensor {
        let elements = allocateFloats(count)
        ElementwiseKernels.smallBinary(
            op, lhs: lhs.assumingMemoryBound(to: Float.self), lhsIsScalar: lhsIsScalar,
            rhs: rhs.assumingMemoryBound(to: Float.self), rhsIsScalar: rhsIsScalar,
            output: elements.assumingMemoryBound(to: Float.self), count: count)
        return MLTensor(node: Node(ownedElements: elements, shape: shape, count: count, type: .float32))
    }

    /// `op(self)` computed now, or `nil` when it must go into the graph (see
    /// ``foldedBinary(_:_:_:)``).
    func foldedUnary(_ op: UnaryOp) -> MLTensor? {
        guard kernelType == .float32 else { return nil }
        let count = scalarCount
        guard count > 0, count <= MLTensor.smallFoldingLimit else { return nil }
        func run(_ input: UnsafeRawPointer) -> MLTensor {
            let elements = MLTensor.allocateFloats(count)
            ElementwiseKernels.smallUnary(
                op, input: input.assumingMemoryBound(to: Float.self),
                output: elements.assumingMemoryBound(to: Float.self), count: count)
            return MLTensor(node: Node(ownedElements: elements, shape: shape, count: count, type: .float32))
        }
        if let leaf = node.leafElements { return run(leaf) }
        guard let value = MLTensor.compactValue(node, count: count) else { return nil }
        return withExtendedLifetime(value) { run(value.firstElement) }
    }

    /// Memory for `count` floats from `malloc` (16-byte aligned, enough for every SIMD type
    /// Swift has; the vector kernels load unaligned), for a node to own.
    private static func allocateFloats(_ count: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Float>.stride, alignment: 16)
    }

    /// `op(self, other)` written over `self`'s elements when this tensor holds the only
    /// reference to a node that owns elements nobody else has seen (a temporary such as the
    /// `x * a` in `x * a + b`) and the result has `self`'s shape; otherwise the same as
    /// ``binary(_:_:)``. The bits are the same either way; only an allocation is saved.
    ///
    /// The arithmetic operators take their left operand as `consuming`, so a temporary
    /// arrives here without another reference.
    package mutating func binaryReusingStorage(_ op: BinaryOp, _ other: MLTensor) -> MLTensor {
        guard kernelType == .float32, other.kernelType == .float32, !op.producesBool,
            MLTensor.identityResult(op, self, other) == nil
        else { return binary(op, other) }
        let count = scalarCount
        let otherCount = other.scalarCount
        guard count > 0, count <= MLTensor.smallFoldingLimit, otherCount > 0,
            node.shape == other.node.shape || (otherCount == 1 && other.rank <= rank),
            let elements = node.leafElements, isKnownUniquelyReferenced(&node), node.ownsItsElements
        else { return binary(op, other) }
        if let otherElements = other.node.leafElements {
            writeInPlace(op, elements, otherElements, otherIsScalar: otherCount == 1 && count > 1, count: count)
        } else {
            guard let value = MLTensor.compactValue(other.node, count: otherCount) else { return binary(op, other) }
            withExtendedLifetime(value) {
                writeInPlace(
                    op, elements, value.firstElement, otherIsScalar: otherCount == 1 && count > 1, count: count)
            }
        }
        return self
    }

    /// `elements[i] = op(elements[i], other[i])`, through the fused interpreter's bodies.
    private func writeInPlace(
        _ op: BinaryOp, _ elements: UnsafeRawPointer, _ other: UnsafeRawPointer, otherIsScalar: Bool, count: Int
    ) {
        let target = UnsafeMutableRawPointer(mutating: elements).assumingMemoryBound(to: Float.self)
        ElementwiseKernels.smallBinary(
            op, lhs: target, lhsIsScalar: false, rhs: other.assumingMemoryBound(to: Float.self),
            rhsIsScalar: otherIsScalar, output: target, count: count)
    }

    /// A materialized node's value when its elements are row-major without gaps (or it has
    /// one element); `nil` for a pending node or another layout.
    static func compactValue(_ node: Node, count: Int) -> TensorValue? {
        guard let value = node.leafValue ?? node.value, count == 1 || value.layout.isContiguous else { return nil }
        return value
    }
}

extension TensorValue {
    /// The address of the element at the layout's offset.
    fileprivate var firstElement: UnsafeRawPointer { pointer + layout.offset * type.byteCount }
}

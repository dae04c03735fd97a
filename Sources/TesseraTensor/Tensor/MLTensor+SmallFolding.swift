import Foundation
import TesseraGraph
import TesseraKernels

/// Constant folding of small element-wise ops at build time.
///
/// A `Float` element-wise op whose operands are already materialized (leaves: tensors made
/// from scalars, shaped arrays or earlier materializations) and whose result has at most
/// ``smallFoldingLimit`` elements is computed when it is built, on the calling thread, and
/// returns a materialized tensor: one that holds up to 16 elements inline (see
/// ``InlineFloats``), or a node that owns its elements. Building, collecting, planning and
/// freeing one graph node costs about a microsecond; computing 256 floats costs a few
/// nanoseconds, so deferring such an op only adds overhead, and there is nothing to fuse that
/// would save a pass over memory.
///
/// The arithmetic is the fused interpreter's own per-block code
/// (`ElementwiseKernels.smallBinary` / `smallUnary`), so a folded result is bit-identical to
/// the one the same op would get inside a fused program.
///
/// ```swift
/// var x = MLTensor([1, 2, 3, 4] as [Float])   // materialized leaf
/// x = x * 1.5 + 0.25                           // both ops computed here; no graph is built
///                                              // (and the results are inline: no allocation)
/// ```
extension MLTensor {
    /// The most elements a build-time folded op may produce: 256 (1 KB of `Float`).
    /// `TESSERA_FOLD_LIMIT` overrides it (`0` turns folding off, for profiling the graph).
    package static let smallFoldingLimit: Int =
        ProcessInfo.processInfo.environment["TESSERA_FOLD_LIMIT"].flatMap { Int($0) } ?? 256

    /// `op(lhs, rhs)` when both operands hold their elements inline (see ``InlineFloats``), or
    /// `nil` to take the general path (an operand has a node, the op produces booleans, folding
    /// is off, or the shapes need more than a single-element broadcast).
    ///
    /// This is the whole cost of an op in a chain such as `x = x * a + b` on a small `x`: no
    /// node, no allocation, no lock. The identities of ``identityResult(_:_:_:)`` apply first
    /// (`x * 1` is `x`), and `+ - * /` run as vector arithmetic, which rounds exactly as the
    /// fused interpreter's kernels do (IEEE operations, no contraction); other ops call those
    /// kernels.
    @inline(__always)
    static func inlineBinary(_ op: BinaryOp, _ lhs: borrowing MLTensor, _ rhs: borrowing MLTensor) -> MLTensor? {
        guard lhs.storedNode == nil, rhs.storedNode == nil, !op.producesBool else { return nil }
        let a = lhs.inline
        let b = rhs.inline
        guard Swift.max(a.count, b.count) <= smallFoldingLimit else { return nil }
        if b.count == 1 && b.rank <= a.rank {
            if b.rank == 0, isIdentity(op, rhs.literal ?? Double(b.elements[0]), onTheRight: true, isFloat: true) {
                return copy lhs
            }
            // (Both rank 0: `1 * y` is `y`, as in `identityResult`.)
            if a.rank == 0, isIdentity(op, lhs.literal ?? Double(a.elements[0]), onTheRight: false, isFloat: true) {
                return copy rhs
            }
            let elements = inlineResult(op, a.elements, a.count == 1, SIMD16(repeating: b.elements[0]), true, a.count)
            return MLTensor(inline: InlineFloats(elements: elements, shapedLike: a))
        }
        if a.count == 1 && a.rank <= b.rank {
            if a.rank == 0, isIdentity(op, lhs.literal ?? Double(a.elements[0]), onTheRight: false, isFloat: true) {
                return copy rhs
            }
            let elements = inlineResult(op, SIMD16(repeating: a.elements[0]), true, b.elements, false, b.count)
            return MLTensor(inline: InlineFloats(elements: elements, shapedLike: b))
        }
        guard a.hasSameShape(as: b) else { return nil }
        return MLTensor(
            inline: InlineFloats(
                elements: inlineResult(op, a.elements, false, b.elements, false, a.count), shapedLike: a))
    }

    /// `op(a, b)` lane by lane, of which `count` lanes are used (a scalar operand arrives
    /// broadcast to every lane).
    @inline(__always)
    private static func inlineResult(
        _ op: BinaryOp, _ a: SIMD16<Float>, _ aIsScalar: Bool, _ b: SIMD16<Float>, _ bIsScalar: Bool, _ count: Int
    ) -> SIMD16<Float> {
        switch op {
        case .add: return a + b
        case .sub: return a - b
        case .mul: return a * b
        case .div: return a / b
        default:
            var output = SIMD16<Float>.zero
            withUnsafeBytes(of: a) { a in
                withUnsafeBytes(of: b) { b in
                    withUnsafeMutableBytes(of: &output) { output in
                        ElementwiseKernels.smallBinary(
                            op, lhs: a.baseAddress!.assumingMemoryBound(to: Float.self), lhsIsScalar: aIsScalar,
                            rhs: b.baseAddress!.assumingMemoryBound(to: Float.self), rhsIsScalar: bIsScalar,
                            output: output.baseAddress!.assumingMemoryBound(to: Float.self), count: count)
                    }
                }
            }
            return output
        }
    }

    /// `op(lhs, rhs)` computed now, or `nil` when the op must go into the graph (an operand is
    /// pending, not `Float`, not compact, the result is large, or the shapes need more than a
    /// single-element broadcast).
    static func foldedBinary(_ op: BinaryOp, _ lhs: MLTensor, _ rhs: MLTensor) -> MLTensor? {
        guard lhs.kernelType == .float32, rhs.kernelType == .float32, !op.producesBool else { return nil }
        let lhsCount = lhs.scalarCount
        let rhsCount = rhs.scalarCount
        guard lhsCount > 0, rhsCount > 0, Swift.max(lhsCount, rhsCount) <= smallFoldingLimit else { return nil }
        let shape: [Int]
        let lhsShape = lhs.shape
        let rhsShape = rhs.shape
        if lhsShape == rhsShape {
            shape = lhsShape
        } else if rhsCount == 1 && rhsShape.count <= lhsShape.count {
            shape = lhsShape
        } else if lhsCount == 1 && lhsShape.count <= rhsShape.count {
            shape = rhsShape
        } else {
            return nil
        }
        let count = Swift.max(lhsCount, rhsCount)
        let result = lhs.withFoldableElements(count: lhsCount) { a in
            rhs.withFoldableElements(count: rhsCount) { b in
                folded(op, a, lhsCount == 1 && count > 1, b, rhsCount == 1 && count > 1, count, shape)
            }
        }
        return result ?? nil
    }

    /// Calls `body` with the address of this materialized tensor's first element when its
    /// `count` elements are row-major without gaps (inline, a compact leaf, a node that owns
    /// its elements, or a compact materialized value); `nil` for a pending or strided tensor.
    /// The address is valid only inside `body`.
    @inline(__always)
    private func withFoldableElements<Result>(
        count: Int, _ body: (UnsafePointer<Float>) -> Result
    ) -> Result? {
        guard let node = storedNode else { return inline.withElements(body) }
        // The node is alive for the whole call (this tensor holds it), and so are its elements:
        // a leaf's address is read without copying its value.
        if let elements = node.leafElements {
            // Folding on an input's elements makes the graph depend on them.
            BuildReads.note(reading: node)
            return body(elements.assumingMemoryBound(to: Float.self))
        }
        guard let value = MLTensor.compactValue(node, count: count) else { return nil }
        return withExtendedLifetime(value) { body(value.firstElement.assumingMemoryBound(to: Float.self)) }
    }

    /// A tensor holding `op` applied to `count` elements from `lhs` and `rhs` (a scalar
    /// operand supplies its one element to every position): inline when it fits, otherwise a
    /// node that owns its elements.
    private static func folded(
        _ op: BinaryOp, _ lhs: UnsafePointer<Float>, _ lhsIsScalar: Bool, _ rhs: UnsafePointer<Float>,
        _ rhsIsScalar: Bool, _ count: Int, _ shape: [Int]
    ) -> MLTensor {
        computed(shape: shape, count: count) { output in
            ElementwiseKernels.smallBinary(
                op, lhs: lhs, lhsIsScalar: lhsIsScalar, rhs: rhs, rhsIsScalar: rhsIsScalar, output: output,
                count: count)
        }
    }

    /// A materialized tensor of `shape` whose `count` elements `write` fills (row-major):
    /// inline when they fit (see ``InlineFloats/fits(shape:count:)``), otherwise a node that
    /// owns them.
    private static func computed(
        shape: [Int], count: Int, _ write: (UnsafeMutablePointer<Float>) -> Void
    ) -> MLTensor {
        if InlineFloats.fits(shape: shape, count: count) {
            var elements = SIMD16<Float>.zero
            withUnsafeMutableBytes(of: &elements) { write($0.baseAddress!.assumingMemoryBound(to: Float.self)) }
            return MLTensor(inline: InlineFloats(shape: shape, count: count, elements: elements)!)
        }
        let elements = allocateFloats(count)
        write(elements.assumingMemoryBound(to: Float.self))
        return MLTensor(node: Node(ownedElements: elements, shape: shape, count: count, type: .float32))
    }

    /// `op(self)` computed now, or `nil` when it must go into the graph (see
    /// ``foldedBinary(_:_:_:)``).
    func foldedUnary(_ op: UnaryOp) -> MLTensor? {
        guard kernelType == .float32 else { return nil }
        let count = scalarCount
        guard count > 0, count <= MLTensor.smallFoldingLimit else { return nil }
        let shape = self.shape
        return withFoldableElements(count: count) { input in
            MLTensor.computed(shape: shape, count: count) { output in
                ElementwiseKernels.smallUnary(op, input: input, output: output, count: count)
            }
        }
    }

    /// Memory for `count` floats from `malloc` (16-byte aligned, enough for every SIMD type
    /// Swift has; the vector kernels load unaligned), for a node to own.
    private static func allocateFloats(_ count: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Float>.stride, alignment: 16)
    }

    /// What the arithmetic operators run: ``inlineBinary(_:_:_:)`` for two inline operands,
    /// otherwise ``binaryReusingStorage(_:_:)`` on the handed-over left operand. (The inline
    /// check comes first, on the borrowed operands: copying the left operand into a variable
    /// for the mutating call is the expensive part of a small op.)
    @inline(__always)
    static func arithmetic(_ op: BinaryOp, _ lhs: consuming MLTensor, _ rhs: borrowing MLTensor) -> MLTensor {
        if let result = inlineBinary(op, lhs, rhs) { return result }
        return lhs.binaryReusingStorage(op, rhs)
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
        // Inline elements need no storage to reuse: `binary` folds them without allocating.
        guard storedNode != nil, count <= MLTensor.smallFoldingLimit, otherCount > 0,
            shape == other.shape || (otherCount == 1 && other.rank <= rank),
            isKnownUniquelyReferenced(&storedNode), let elements = storedNode!.leafElements,
            storedNode!.ownsItsElements
        else { return binary(op, other) }
        let otherIsScalar = otherCount == 1 && count > 1
        let written: Void? = other.withFoldableElements(count: otherCount) { otherElements in
            writeInPlace(op, elements, otherElements, otherIsScalar: otherIsScalar, count: count)
        }
        return written == nil ? binary(op, other) : self
    }

    /// `elements[i] = op(elements[i], other[i])`, through the fused interpreter's bodies.
    private func writeInPlace(
        _ op: BinaryOp, _ elements: UnsafeRawPointer, _ other: UnsafePointer<Float>, otherIsScalar: Bool, count: Int
    ) {
        let target = UnsafeMutableRawPointer(mutating: elements).assumingMemoryBound(to: Float.self)
        ElementwiseKernels.smallBinary(
            op, lhs: target, lhsIsScalar: false, rhs: other, rhsIsScalar: otherIsScalar, output: target, count: count)
    }

    /// A materialized node's value when its elements are row-major without gaps (or it has
    /// one element); `nil` for a pending node or another layout.
    static func compactValue(_ node: Node, count: Int) -> TensorValue? {
        guard let value = node.leafValue ?? node.value, count == 1 || value.layout.isContiguous else { return nil }
        // Folding on a computed value (an input, say) makes the graph depend on it.
        BuildReads.note(reading: node)
        return value
    }
}

extension TensorValue {
    /// The address of the element at the layout's offset.
    fileprivate var firstElement: UnsafeRawPointer { pointer + layout.offset * type.byteCount }
}

import TesseraKernels
import Testing
import _TesseraTestSupport

/// The element types the copy tests sweep: one or two per element size.
protocol CopyTestElement: KernelScalar, Equatable {
    /// A value that differs for nearby `i`, so a kernel reading the wrong element is caught.
    static func make(_ i: Int) -> Self
}

extension UInt8: CopyTestElement { static func make(_ i: Int) -> UInt8 { UInt8(truncatingIfNeeded: i &* 37 &+ 11) } }
extension Int16: CopyTestElement { static func make(_ i: Int) -> Int16 { Int16(truncatingIfNeeded: i &* 7919 &+ 3) } }
extension Float16: CopyTestElement { static func make(_ i: Int) -> Float16 { Float16(Float(i % 1999) - 900.5) } }
extension Float: CopyTestElement { static func make(_ i: Int) -> Float { Float(i) * 0.5 - 17 } }
extension Int32: CopyTestElement {
    static func make(_ i: Int) -> Int32 { Int32(truncatingIfNeeded: i &* 2_654_435_761) }
}
extension Double: CopyTestElement { static func make(_ i: Int) -> Double { Double(i) * 1.25 + 0.125 } }

/// One type per element size (1, 2, 4, 8 bytes), plus a second of sizes 2 and 4.
let allSizeTypes: [any CopyTestElement.Type] = [
    UInt8.self, Int16.self, Float16.self, Float.self, Int32.self, Double.self,
]

/// Bytes that must survive around every output buffer.
let guardByte: UInt8 = 0xA5
let guardElements = 8

/// Runs `body` with a private, 64-byte-aligned copy of `array` (never a nil pointer, even
/// when the array is empty).
func withRaw<T, R>(_ array: [T], _ body: (UnsafeRawPointer) -> R) -> R {
    let byteCount = Swift.max(1, array.count) * MemoryLayout<T>.stride
    let pointer = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
    defer { pointer.deallocate() }
    array.withUnsafeBytes { bytes in
        if let base = bytes.baseAddress { pointer.copyMemory(from: base, byteCount: bytes.count) }
    }
    return body(pointer)
}

/// Runs `body` on a fresh buffer of `count` elements (pre-filled with `initial`, or guard
/// bytes) and returns its elements; records an issue when `body` writes past the end.
func output<T>(
    _: T.Type, count: Int, initial: [T]? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (UnsafeMutableRawPointer) -> Void
) -> [T] {
    let stride = MemoryLayout<T>.stride
    let byteCount = (count + guardElements) * stride
    let pointer = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
    defer { pointer.deallocate() }
    for i in 0..<byteCount { pointer.storeBytes(of: guardByte, toByteOffset: i, as: UInt8.self) }
    if let initial {
        initial.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
    body(pointer)
    for i in (count * stride)..<byteCount where pointer.load(fromByteOffset: i, as: UInt8.self) != guardByte {
        Issue.record("wrote past the end of a \(count)-element output (byte \(i))", sourceLocation: sourceLocation)
        break
    }
    return (0..<count).map { pointer.load(fromByteOffset: $0 * stride, as: T.self) }
}

/// A random shape of `rank` with dimensions in `sizes`; now and then one dimension is 0.
func randomShape(rank: Int, sizes: ClosedRange<Int> = 1...4, allowZero: Bool, using rng: inout SeededRandom) -> [Int] {
    var shape = rng.shape(rank: rank, sizes: sizes)
    if allowZero && rank > 0 && Int.random(in: 0..<6, using: &rng) == 0 {
        shape[Int.random(in: 0..<rank, using: &rng)] = 0
    }
    return shape
}

/// Storage for `shape` laid out as `kind`, filled with `T.make(slot)`.
func operand<T: CopyTestElement>(_: T.Type, _ kind: LayoutKind, _ shape: [Int]) -> StridedStorage<T> {
    kind.make(shape: shape) { T.make($0) }
}

/// A broadcast operand: contiguous storage with some dimensions of size 1 (or missing),
/// read as `shape` with stride 0 on them.
func broadcastOperand<T: CopyTestElement>(_: T.Type, _ shape: [Int], using rng: inout SeededRandom)
    -> StridedStorage<T>
{
    let lead = Int.random(in: 0...shape.count, using: &rng)
    let small = shape.enumerated().compactMap { axis, size -> Int? in
        axis < lead ? nil : (Bool.random(using: &rng) ? 1 : size)
    }
    let base = StridedLayout(contiguous: small)
    return StridedStorage(
        storage: (0..<base.count).map { T.make($0) }, layout: base.broadcast(to: shape))
}

/// Checks two element arrays are equal, reporting only the first difference (large outputs
/// would otherwise print every element).
func expectSameElements<T: Equatable>(
    _ got: [T], _ expected: [T], _ context: String = "", sourceLocation: SourceLocation = #_sourceLocation
) {
    guard got.count == expected.count else {
        Issue.record("\(context): \(got.count) elements, expected \(expected.count)", sourceLocation: sourceLocation)
        return
    }
    if let i = got.indices.first(where: { got[$0] != expected[$0] }) {
        Issue.record(
            "\(context): element \(i) is \(got[i]), expected \(expected[i])", sourceLocation: sourceLocation)
    }
}

import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// Prepared forms kept outside the process's own packing (a compiled model's stored forms):
/// exported with their weights' places (``PreparedWeights/forms(in:)``), registered over other
/// memory holding the same weights (``PreparedWeights/register(_:base:keepAlive:)``), found there
/// without packing and read in place.
@Suite("Prepared weights: stored forms")
struct PreparedWeightsStoredTests {
    /// Owns memory for the test: the weights' copy and the stored forms' bytes.
    final class Memory: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        let count: Int
        init(count: Int) {
            self.count = count
            pointer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 64)
        }
        deinit { pointer.deallocate() }
    }

    /// Keeps memories alive together (as a compiled model's mapping holds both its weights and
    /// their stored forms).
    final class Holder: Sendable {
        let memories: [Memory]
        init(_ memories: [Memory]) { self.memories = memories }
    }

    /// Byte offsets of the three weights in the weights memory, and its size.
    static let leftOffset = 0
    static let rightOffset = 16 * 144 * 4
    static let winogradOffset = rightOffset + 40 * 24 * 4
    static let weightBytes = winogradOffset + 16 * 16 * 9 * 4

    /// Looks up the three forms of the weights in `storage`.
    static func lookUp(_ storage: TensorStorage) -> [AnyObject?] {
        [
            PreparedWeights.packed(storage, offset: leftOffset / 4, rows: 16, depth: 144),
            PreparedWeights.packedRight(
                storage, offset: rightOffset / 4, depth: 24, columns: 40, rowStride: 24, transposed: true),
            PreparedWeights.winograd(
                storage, offset: winogradOffset / 4, outputChannels: 16, inputChannels: 16, tile: 4),
        ]
    }

    @Test("forms exported from one copy of the weights are found, unpacked and in place, over another")
    func exportAndRegister() async throws {
        let original = Memory(count: Self.weightBytes)
        let floats = original.pointer.assumingMemoryBound(to: Float.self)
        for index in 0..<(Self.weightBytes / 4) { floats[index] = Float((index * 37) % 101) / 50 - 1 }
        let adopted = TensorStorage(adopting: original.pointer, byteCount: Self.weightBytes, release: nil)
        let made = Self.lookUp(adopted)
        guard made.allSatisfy({ $0 != nil }) else { return }  // a CPU without the packed kernels
        let exported = PreparedWeights.forms(
            in: UnsafeRawBufferPointer(start: original.pointer, count: Self.weightBytes))
        #expect(exported.map(\.form.kind) == [.left, .rightTransposed, .winograd])
        #expect(exported.map(\.form.weightOffset) == [Self.leftOffset, Self.rightOffset, Self.winogradOffset])
        #expect(exported.allSatisfy { $0.form.byteCount == $0.bytes.count })

        // Another copy of the weights, and the forms' bytes copied to 64-byte aligned places.
        let copy = Memory(count: Self.weightBytes)
        copy.pointer.copyMemory(from: original.pointer, byteCount: Self.weightBytes)
        let places = exported.reduce(into: [0]) { $0.append($0.last! + ($1.bytes.count + 63) / 64 * 64) }
        let stored = Memory(count: places.last!)
        for (index, form) in exported.enumerated() {
            (stored.pointer + places[index]).copyMemory(from: form.bytes.baseAddress!, byteCount: form.bytes.count)
        }
        let holder = Holder([copy, stored])
        PreparedWeights.register(
            exported.enumerated().map { ($0.element.form, UnsafeRawPointer(stored.pointer + places[$0.offset])) },
            base: copy.pointer, keepAlive: holder)
        let storage = TensorStorage(adopting: copy.pointer, byteCount: Self.weightBytes, release: nil)
        let (found, misses) = await PreparedWeights.countingMisses { Self.lookUp(storage) }
        #expect(misses == 0)
        let left = try #require(found[0] as? PackedGEMMOperand)
        let right = try #require(found[1] as? PackedGEMMRightOperand)
        let filter = try #require(found[2] as? WinogradFilter)
        #expect(UnsafeRawPointer(left.panels) == UnsafeRawPointer(stored.pointer + places[0]))
        #expect(UnsafeRawPointer(right.strips) == UnsafeRawPointer(stored.pointer + places[1]))
        #expect(UnsafeRawPointer(filter.storage) == UnsafeRawPointer(stored.pointer + places[2]))
        for (index, form) in exported.enumerated() {
            #expect(memcmp(stored.pointer + places[index], form.bytes.baseAddress!, form.bytes.count) == 0)
        }
        withExtendedLifetime((made, adopted, original, holder)) {}
    }

    @Test("a registered form whose keep-alive is gone is not used: the weight is packed")
    func releasedKeepAlive() async {
        let weights = Memory(count: Self.weightBytes)
        weights.pointer.initializeMemory(as: UInt8.self, repeating: 0, count: Self.weightBytes)
        var stored: Memory? = Memory(count: PackedGEMMOperand.byteCount(rows: 16, depth: 144))
        let form = PreparedWeights.StoredForm(kind: .left, weightOffset: 0, rows: 16, depth: 144, parameter: 0)
        PreparedWeights.register(
            [(form, UnsafeRawPointer(stored!.pointer))], base: weights.pointer, keepAlive: Holder([stored!]))
        stored = nil
        let storage = TensorStorage(adopting: weights.pointer, byteCount: Self.weightBytes, release: nil)
        let (packed, misses) = await PreparedWeights.countingMisses {
            PreparedWeights.packed(storage, offset: 0, rows: 16, depth: 144)
        }
        if packed != nil { #expect(misses == 1) }
    }

    @Test("stored form sizes follow the kernels' layouts; malformed forms have none")
    func storedFormSizes() {
        typealias Form = PreparedWeights.StoredForm
        #expect(
            Form(kind: .left, weightOffset: 0, rows: 9, depth: 5, parameter: 0).byteCount
                == PackedGEMMOperand.byteCount(rows: 9, depth: 5))
        #expect(Form(kind: .left, weightOffset: 0, rows: 9, depth: 5, parameter: 0).byteCount == 16 * 5 * 4)
        #expect(Form(kind: .rightTransposed, weightOffset: 0, rows: 17, depth: 3, parameter: 3).byteCount == 32 * 3 * 4)
        #expect(Form(kind: .winograd, weightOffset: 0, rows: 8, depth: 2, parameter: 2).byteCount == 16 * 8 * 2 * 4)
        #expect(Form(kind: .winograd, weightOffset: 0, rows: 8, depth: 2, parameter: 3).byteCount == nil)
        #expect(Form(kind: .right, weightOffset: 0, rows: 17, depth: 3, parameter: 16).byteCount == nil)
        #expect(Form(kind: .left, weightOffset: 0, rows: -1, depth: 3, parameter: 0).byteCount == nil)
        #expect(Form(kind: .left, weightOffset: 0, rows: 1 << 30, depth: 1 << 30, parameter: 0).byteCount == nil)
    }
}

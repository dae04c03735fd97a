import Testing

@testable import TesseraKernels

@Suite("Memory for kept prepared weights")
struct KeptWeightMemoryTests {
    @Test(
        "allocations are 64-byte aligned, disjoint and writable; small ones share a region, large ones have their own")
    func allocations() {
        let sizes = [1, 100, 4096, 64, 3 * 1024 + 5]
        let pieces = sizes.map { KeptWeightMemory.allocate(byteCount: $0) }
        for (piece, size) in zip(pieces, sizes) {
            #expect(Int(bitPattern: piece.pointer) % 64 == 0)
            piece.pointer.initializeMemory(as: UInt8.self, repeating: UInt8(size % 251), count: size)
        }
        // Every piece still holds what was written to it: none overlaps another.
        for (piece, size) in zip(pieces, sizes) {
            let bytes = UnsafeRawBufferPointer(start: piece.pointer, count: size)
            #expect(bytes.allSatisfy { $0 == UInt8(size % 251) })
        }
        let ranges = zip(pieces, sizes).map { Int(bitPattern: $0.pointer)..<(Int(bitPattern: $0.pointer) + $1) }
        for (index, range) in ranges.enumerated() {
            #expect(!ranges[(index + 1)...].contains { $0.overlaps(range) })
        }
        // Consecutive small pieces come from one region (unless the first filled it up).
        let first = KeptWeightMemory.allocate(byteCount: 256)
        let second = KeptWeightMemory.allocate(byteCount: 256)
        let sameRegion = ObjectIdentifier(first.owner) == ObjectIdentifier(second.owner)
        #expect(sameRegion || second.pointer - first.pointer != 256)
        let large = KeptWeightMemory.allocate(byteCount: KeptWeightMemory.regionSize)
        let ownRegion = ObjectIdentifier(large.owner) != ObjectIdentifier(second.owner)
        #expect(ownRegion)
        large.pointer.initializeMemory(as: UInt8.self, repeating: 7, count: KeptWeightMemory.regionSize)
        #expect(large.pointer.load(fromByteOffset: KeptWeightMemory.regionSize - 1, as: UInt8.self) == 7)
    }

    @Test("forms packed into kept memory are the forms packed into a buffer of their own")
    func keptForms() {
        let (rows, depth) = (13, 37)
        let a: [Float] = (0..<(rows * depth)).map { Float($0 % 17) - 8 }
        let own = PackedGEMMOperand(packing: a, lda: depth, rows: rows, depth: depth)
        let kept = PackedGEMMOperand(packing: a, lda: depth, rows: rows, depth: depth, kept: true)
        let count = own.byteCount / MemoryLayout<Float>.stride
        #expect(
            Array(UnsafeBufferPointer(start: kept.panels, count: count))
                == Array(UnsafeBufferPointer(start: own.panels, count: count)))
        let right = PackedGEMMRightOperand(packing: a, rowStride: depth, transposed: true, depth: depth, columns: rows)
        let keptRight = PackedGEMMRightOperand(
            packing: a, rowStride: depth, transposed: true, depth: depth, columns: rows, kept: true)
        let rightCount = right.byteCount / MemoryLayout<Float>.stride
        #expect(
            Array(UnsafeBufferPointer(start: keptRight.strips, count: rightCount))
                == Array(UnsafeBufferPointer(start: right.strips, count: rightCount)))
        let filter: [Float] = (0..<(4 * 3 * 9)).map { Float($0 % 11) - 5 }
        let winograd = WinogradFilter(transforming: filter, outputChannels: 4, inputChannels: 3, tile: 4)
        let keptWinograd = WinogradFilter(
            transforming: filter, outputChannels: 4, inputChannels: 3, tile: 4, kept: true)
        let filterCount = winograd.byteCount / MemoryLayout<Float>.stride
        #expect(
            Array(UnsafeBufferPointer(start: keptWinograd.storage, count: filterCount))
                == Array(UnsafeBufferPointer(start: winograd.storage, count: filterCount)))
    }
}

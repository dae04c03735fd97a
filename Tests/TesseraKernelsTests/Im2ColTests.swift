import CTesseraSIMD
import Testing

@Suite("Im2col rows")
struct Im2ColTests {
    /// Lengths around the vector widths (8, 16) and a stride-2 first layer's rows (112, 111).
    static let lengths = Array(0...50) + [63, 64, 65, 111, 112]

    @Test("the stride-2 copy takes every other element and writes exactly n", arguments: lengths)
    func strideTwoCopy(_ n: Int) {
        // The source holds exactly the 2n − 1 elements the copy may read.
        let sourceCount = Swift.max(0, 2 * n - 1)
        let source = (0..<sourceCount).map { Float($0) * 0.5 - 7 }
        var destination = [Float](repeating: .nan, count: n + 17)
        let sentinel = Float(bitPattern: 0x7FC0_1234)
        for i in n..<destination.count { destination[i] = sentinel }
        source.withUnsafeBufferPointer { s in
            destination.withUnsafeMutableBufferPointer { d in
                tessera_copy_stride2_f32(d.baseAddress, s.baseAddress, n)
            }
        }
        let copied = (0..<n).allSatisfy { destination[$0].bitPattern == source[2 * $0].bitPattern }
        let untouched = (n..<destination.count).allSatisfy { destination[$0].bitPattern == sentinel.bitPattern }
        #expect(copied, "n \(n)")
        #expect(untouched, "n \(n): wrote past the end")
    }
}

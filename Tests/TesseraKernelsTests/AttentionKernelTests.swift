import Testing
import _TesseraTestSupport

@testable import TesseraKernels

@Suite("Fused attention kernel")
struct AttentionKernelTests {
    /// (heads, l, s, e, ev): one element, odd sizes, more keys than one block (128) with a tail,
    /// more query rows than one block (32), a transformer layer's heads, many small heads, fewer
    /// than 16 rows with value columns in groups of 16 and 8, an audio encoder's 1500 keys.
    static let shapes: [(heads: Int, l: Int, s: Int, e: Int, ev: Int)] = [
        (1, 1, 1, 1, 1), (3, 7, 5, 3, 9), (2, 33, 300, 17, 70), (4, 128, 128, 64, 64), (2, 50, 129, 64, 64),
        (1, 130, 257, 80, 33), (12, 5, 16, 8, 8), (1, 10, 200, 24, 40), (1, 40, 1500, 64, 64),
    ]

    /// How the mask is given: none, one per head and row, one row for every query and head
    /// (broadcast by strides), one value per row for every key.
    enum MaskForm: CaseIterable { case none, full, sharedRow, perRow }

    /// Runs the kernel on `[heads, l, e]` queries stored with a padded row stride and returns its
    /// result next to the naive one.
    static func run(
        _ shape: (heads: Int, l: Int, s: Int, e: Int, ev: Int), mask form: MaskForm, sharedKeys: Bool,
        body: AttentionKernels.Body, seed: UInt64, masking: (Int, Int, Int) -> Bool = { _, _, _ in false }
    ) -> (got: [Float], want: [Double]) {
        let (heads, l, s, e, ev) = shape
        var rng = SeededRandom(seed: seed)
        let ldq = e + 3
        let qStored = rng.floats(heads * l * ldq, in: -2...2)
        let keyHeads = sharedKeys ? 1 : heads
        let k = rng.floats(keyHeads * s * e, in: -2...2)
        let v = rng.floats(keyHeads * s * ev)
        // The mask as stored, its layout, and its expansion to [heads, l, s] for the reference.
        var stored: [Float] = []
        var layout: StridedLayout?
        var expanded: [Float]?
        switch form {
        case .none: break
        case .full:
            stored = rng.floats(heads * l * s)
            for h in 0..<heads {
                for i in 0..<l {
                    for j in 0..<s where masking(h, i, j) { stored[(h * l + i) * s + j] = -.infinity }
                }
            }
            layout = StridedLayout(contiguous: [heads, l, s])
            expanded = stored
        case .sharedRow:
            stored = rng.floats(s)
            if s > 1 { stored[s - 1] = -.infinity }
            layout = StridedLayout(shape: [heads, l, s], strides: [0, 0, 1])
            expanded = (0..<(heads * l * s)).map { stored[$0 % s] }
        case .perRow:
            stored = rng.floats(heads * l)
            layout = StridedLayout(shape: [heads, l, s], strides: [l, 1, 0])
            expanded = (0..<(heads * l * s)).map { stored[$0 / s] }
        }
        var q = [Float](repeating: 0, count: heads * l * e)
        for row in 0..<(heads * l) {
            for p in 0..<e { q[row * e + p] = qStored[row * ldq + p] }
        }
        let scale: Float = 0.37
        let want = NaiveAttention.attention(
            q: q, k: sharedKeys ? Array(repeating: k, count: heads).flatMap { $0 } : k,
            v: sharedKeys ? Array(repeating: v, count: heads).flatMap { $0 } : v, mask: expanded, heads: heads, l: l,
            s: s, e: e, ev: ev, scale: scale)
        let keyBatch = sharedKeys ? 0 : 1
        var got = [Float](repeating: .nan, count: heads * l * ev)
        qStored.withUnsafeBytes { qp in
            k.withUnsafeBytes { kp in
                v.withUnsafeBytes { vp in
                    stored.withUnsafeBytes { mp in
                        got.withUnsafeMutableBufferPointer { out in
                            AttentionKernels.attention(
                                query: qp.baseAddress!,
                                queryLayout: StridedLayout(shape: [heads, l, e], strides: [l * ldq, ldq, 1]),
                                key: kp.baseAddress!,
                                keyLayout: StridedLayout(shape: [heads, s, e], strides: [keyBatch * s * e, e, 1]),
                                value: vp.baseAddress!,
                                valueLayout: StridedLayout(
                                    shape: [heads, s, ev], strides: [keyBatch * s * ev, ev, 1]),
                                mask: layout == nil ? nil : mp.baseAddress!, maskLayout: layout, scale: scale,
                                output: out.baseAddress!, body: body)
                        }
                    }
                }
            }
        }
        return (got, want)
    }

    @Test("matches the naive attention: odd sizes, several heads, every mask form, every body")
    func matchesNaive() {
        for (index, shape) in Self.shapes.enumerated() {
            for form in MaskForm.allCases {
                for body in AttentionKernels.Body.allCases {
                    let (got, want) = Self.run(
                        shape, mask: form, sharedKeys: index % 2 == 1, body: body, seed: UInt64(index),
                        masking: { h, i, j in (h + i + j) % 5 == 0 })
                    let mismatch = firstMismatch(got.map(Double.init), want, rtol: 1e-5, atol: 2e-6)
                    #expect(mismatch == nil, "\(shape) mask \(form) body \(body): \(mismatch ?? "")")
                }
            }
        }
    }

    @Test("a fully masked row is NaN; a row masked across a whole key block still sees the next block")
    func maskedRows() {
        // 300 keys: blocks of 128, 128 and 44. Row 0 of head 0 masks every key; row 1 masks the
        // first block entirely; row 2 masks everything but the last key.
        let shape = (heads: 2, l: 40, s: 300, e: 16, ev: 24)
        for body in AttentionKernels.Body.allCases {
            let (got, want) = Self.run(
                shape, mask: .full, sharedKeys: false, body: body, seed: 9,
                masking: { h, i, j in h == 0 && (i == 0 || (i == 1 && j < 128) || (i == 2 && j < 299)) })
            let maskedRowIsNaN = got[0..<24].allSatisfy(\.isNaN)
            let othersAreNumbers = got[24...].allSatisfy { !$0.isNaN }
            #expect(maskedRowIsNaN, "body \(body)")
            #expect(othersAreNumbers, "body \(body)")
            let mismatch = firstMismatch(got.map(Double.init), want, rtol: 1e-5, atol: 2e-6)
            #expect(mismatch == nil, "body \(body): \(mismatch ?? "")")
        }
    }

    @Test("split across threads or run serially, the result is the same")
    func threadsAgree() {
        let shape = (heads: 3, l: 100, s: 70, e: 32, ev: 40)
        let (parallel, _) = Self.run(shape, mask: .full, sharedKeys: false, body: .best, seed: 4)
        let (serial, _) = KernelThreads.withSerialLoops {
            Self.run(shape, mask: .full, sharedKeys: false, body: .best, seed: 4)
        }
        #expect(parallel == serial)
    }
}

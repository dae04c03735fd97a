import Foundation
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

@Suite("OpenBLAS loading")
struct OpenBLASLibraryTests {
    @Test("the CPU's kernel family is chosen unless the environment chose one")
    func coreType() {
        let name = OpenBLASLibrary.shared.coreName.lowercased()
        if let chosen = ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] {
            #expect(name == chosen.lowercased())
        } else if let preferred = OpenBLASLibrary.preferredCoreType() {
            #expect(name == preferred.lowercased(), "OpenBLAS runs \(name), expected \(preferred)")
        }
    }

    @Test("AVX-512 picks SkylakeX unless it runs in halves (AMD family 25); AVX2 and FMA pick Haswell")
    func coreTypeByCPU() {
        let avx512: Set<String> = ["avx2", "fma", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"]
        #expect(OpenBLASLibrary.coreType(flags: avx512, vendor: "GenuineIntel", family: 6) == "SkylakeX")
        #expect(OpenBLASLibrary.coreType(flags: avx512, vendor: "AuthenticAMD", family: 25) == "Haswell")
        #expect(OpenBLASLibrary.coreType(flags: avx512, vendor: "AuthenticAMD", family: 26) == "SkylakeX")
        #expect(OpenBLASLibrary.coreType(flags: ["avx2", "fma"], vendor: "GenuineIntel", family: 6) == "Haswell")
        #expect(OpenBLASLibrary.coreType(flags: ["sse3", "avx"], vendor: "AuthenticAMD", family: 23) == nil)
    }

    @Test("a product split across threads equals one BLAS call")
    func partitionedProduct() {
        let (m, n, k) = (130, 257, 96)
        var rng = SystemRandomNumberGenerator()
        let a = (0..<(m * k)).map { _ in Float.random(in: -1...1, using: &rng) }
        let b = (0..<(k * n)).map { _ in Float.random(in: -1...1, using: &rng) }
        var whole = [Float](repeating: 0, count: m * n)
        var split = [Float](repeating: 0, count: m * n)
        OpenBLASLibrary.shared.sgemm(
            transposeA: false, transposeB: false, m: m, n: n, k: k, alpha: 1, a: a, lda: k, b: b, ldb: n, beta: 0,
            c: &whole, ldc: n)
        GEMMKernels.sgemm(
            transposeA: false, transposeB: false, m: m, n: n, k: k, alpha: 1, a: a, lda: k, b: b, ldb: n, beta: 0,
            c: &split, ldc: n)
        // Blocks may take different kernel edge paths, so compare with a float tolerance.
        let mismatch = firstMismatch(split, whole, rtol: 1e-5, atol: 1e-5)
        #expect(mismatch == nil, "\(mismatch ?? "")")
    }
}

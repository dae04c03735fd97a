import COpenBLAS
import Foundation

/// OpenBLAS, loaded at run time with the settings Tessera needs.
///
/// OpenBLAS reads its thread count (`OPENBLAS_NUM_THREADS`) and CPU kernel choice
/// (`OPENBLAS_CORETYPE`) once, when the library loads, and nothing can change them afterwards.
/// Linked at build time it would load before any Tessera code runs, so Tessera loads it itself
/// on the first matrix product, after setting:
///
/// - `OPENBLAS_NUM_THREADS=1`, unless you set it: Tessera splits large products across its own
///   threads (``GEMMKernels``), and OpenBLAS's worker threads would otherwise busy-wait after
///   every call, taking a core from the kernels that follow.
/// - `OPENBLAS_CORETYPE`, unless you set it, to `SkylakeX` on CPUs with AVX-512 (F, CD, BW, DQ,
///   VL) or `Haswell` on CPUs with AVX2 and FMA. Debian's OpenBLAS 0.3.21 does not recognise
///   many newer or virtual CPUs and falls back to generic SSE3 kernels, less than half as fast.
///
/// Both variables are restored to their previous state right after loading, so child processes
/// see the environment you gave.
///
/// ```swift
/// print(OpenBLASLibrary.shared.coreName)   // "SkylakeX"
/// ```
package struct OpenBLASLibrary: @unchecked Sendable {
    let sgemm: tessera_cblas_sgemm_fn
    let dgemm: tessera_cblas_dgemm_fn
    private let getCoreName: tessera_openblas_get_corename_fn?

    /// The library, loaded on first use. Traps with install instructions when OpenBLAS is missing.
    package static let shared = OpenBLASLibrary()

    private init() {
        let settings = [
            ("OPENBLAS_NUM_THREADS", "1"),
            ("OPENBLAS_CORETYPE", OpenBLASLibrary.preferredCoreType()),
        ]
        var changed: [String] = []
        for (name, value) in settings {
            if let value, getenv(name) == nil {
                setenv(name, value, 0)
                changed.append(name)
            }
        }
        var handle: UnsafeMutableRawPointer?
        for name in ["libopenblas.so.0", "libopenblas.so"] where handle == nil {
            handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL)
        }
        for name in changed { unsetenv(name) }
        guard let handle else {
            kernelFailure(
                "[OpenBLAS] libopenblas.so.0 could not be loaded (\(String(cString: dlerror()))); "
                    + "install it with `apt-get install libopenblas-dev` (or run `make deps`)")
        }
        func symbol<F>(_ name: String, as _: F.Type) -> F? {
            dlsym(handle, name).map { unsafeBitCast($0, to: F.self) }
        }
        guard let sgemm = symbol("cblas_sgemm", as: tessera_cblas_sgemm_fn.self),
            let dgemm = symbol("cblas_dgemm", as: tessera_cblas_dgemm_fn.self)
        else {
            kernelFailure("[OpenBLAS] the loaded library lacks cblas_sgemm / cblas_dgemm")
        }
        self.sgemm = sgemm
        self.dgemm = dgemm
        getCoreName = symbol("openblas_get_corename", as: tessera_openblas_get_corename_fn.self)
    }

    /// The CPU kernel family OpenBLAS chose (for example `SkylakeX`, `Haswell`, or `Prescott`
    /// for its generic fallback).
    package var coreName: String {
        guard let getCoreName, let name = getCoreName() else { return "unknown" }
        return String(cString: name)
    }

    /// Row-major single-precision GEMM, `C = alpha · op(A) · op(B) + beta · C`, straight to
    /// OpenBLAS (one thread).
    @inlinable
    package func sgemm(
        transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int, alpha: Float, a: UnsafePointer<Float>,
        lda: Int, b: UnsafePointer<Float>, ldb: Int, beta: Float, c: UnsafeMutablePointer<Float>, ldc: Int
    ) {
        callSgemm(transposeA, transposeB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    }

    @usableFromInline
    func callSgemm(
        _ ta: Bool, _ tb: Bool, _ m: Int, _ n: Int, _ k: Int, _ alpha: Float, _ a: UnsafePointer<Float>, _ lda: Int,
        _ b: UnsafePointer<Float>, _ ldb: Int, _ beta: Float, _ c: UnsafeMutablePointer<Float>, _ ldc: Int
    ) {
        sgemm(
            CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m), blasint(n),
            blasint(k), alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc))
    }

    /// Row-major double-precision GEMM, straight to OpenBLAS (one thread).
    func callDgemm(
        _ ta: Bool, _ tb: Bool, _ m: Int, _ n: Int, _ k: Int, _ alpha: Double, _ a: UnsafePointer<Double>,
        _ lda: Int, _ b: UnsafePointer<Double>, _ ldb: Int, _ beta: Double, _ c: UnsafeMutablePointer<Double>,
        _ ldc: Int
    ) {
        dgemm(
            CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m), blasint(n),
            blasint(k), alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc))
    }

    /// The best OpenBLAS 0.3 kernel family this CPU supports, from `/proc/cpuinfo`'s flags.
    static func preferredCoreType() -> String? {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
        else { return nil }
        let flags = Set(line.split(separator: " ").map(String.init))
        if ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"].allSatisfy(flags.contains) {
            return "SkylakeX"
        }
        if flags.contains("avx2") && flags.contains("fma") { return "Haswell" }
        return nil
    }
}

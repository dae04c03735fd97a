import COpenBLAS
import Foundation

/// OpenBLAS, loaded at run time with the settings Tessera needs, or found already loaded and
/// brought to them.
///
/// OpenBLAS reads its thread count (`OPENBLAS_NUM_THREADS`) and CPU kernel choice
/// (`OPENBLAS_CORETYPE`) once, when the library loads. Tessera wants:
///
/// - one OpenBLAS thread, unless you set `OPENBLAS_NUM_THREADS`: Tessera splits large
///   products across its own threads (``GEMMKernels``), and OpenBLAS's worker threads would
///   otherwise busy-wait after every call, taking a core from the kernels that follow;
/// - the fastest kernel family for the CPU, unless you set `OPENBLAS_CORETYPE`: `SkylakeX`
///   on CPUs with full-width AVX-512 (F, CD, BW, DQ, VL), `Haswell` on CPUs with AVX2 and FMA
///   (AMD's Zen 4 included, whose AVX-512 runs in 256-bit halves). Debian's
///   OpenBLAS 0.3.21 does not recognise many newer or virtual CPUs and falls back to generic
///   SSE3 kernels (`Prescott`), less than half as fast.
///
/// On the first matrix product Tessera looks for an OpenBLAS the process already has (an app
/// or library that links `-lopenblas`) and ends up with those settings either way
/// (``origin``):
///
/// - none loaded: it sets both variables (each only when you have not), loads the library,
///   and restores the environment, so child processes see the environment you gave;
/// - loaded, running the wanted kernel family (or a build without `DYNAMIC_ARCH`, which has
///   only one): Tessera uses it and sets its thread count to 1 with
///   `openblas_set_num_threads`. That setting is process-wide: the process's own BLAS calls
///   then run on one thread too;
/// - loaded with another family (the usual case on CPUs Debian's build does not recognise):
///   Tessera loads a private copy of the same file with `dlmopen` in a namespace of its own,
///   initialised with Tessera's settings, and leaves the process's copy as it was. When that
///   fails it uses the process's copy, single-threaded, with its kernels.
///
/// ```swift
/// print(OpenBLASLibrary.shared.summary)   // "SkylakeX, 1 thread, loaded by Tessera"
/// ```
package struct OpenBLASLibrary: @unchecked Sendable {
    /// How the OpenBLAS that Tessera calls came to be.
    package enum Origin: Sendable, Equatable {
        /// No OpenBLAS was loaded: Tessera loaded it with its settings.
        case loadedByTessera
        /// The process had loaded OpenBLAS with the wanted kernels (or Tessera could not load
        /// a copy of its own): Tessera shares it, set to one thread.
        case shared
        /// The process had loaded OpenBLAS with the kernel family named here: Tessera loaded
        /// a private copy with the wanted one.
        case privateCopy(processCoreName: String)
    }

    let sgemm: tessera_cblas_sgemm_fn
    let dgemm: tessera_cblas_dgemm_fn
    private let getCoreName: tessera_openblas_get_corename_fn?
    private let getConfig: tessera_openblas_get_config_fn?
    private let getNumThreads: tessera_openblas_get_num_threads_fn?
    /// How the library came to be: loaded by Tessera, shared with the process, or a private copy.
    package let origin: Origin

    /// The library, loaded (or found) on first use. Traps with install instructions when
    /// OpenBLAS is missing.
    package static let shared = OpenBLASLibrary(LoadedOpenBLAS.find())

    init(_ loaded: LoadedOpenBLAS) {
        let handle = loaded.handle
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
        getConfig = symbol("openblas_get_config", as: tessera_openblas_get_config_fn.self)
        getNumThreads = symbol("openblas_get_num_threads", as: tessera_openblas_get_num_threads_fn.self)
        origin = loaded.origin
        // Whoever loaded it, one thread unless the user asked otherwise (a library loaded
        // before Tessera read no `OPENBLAS_NUM_THREADS=1` of Tessera's).
        if getenv("OPENBLAS_NUM_THREADS") == nil, let getNumThreads, getNumThreads() != 1,
            let setNumThreads = symbol("openblas_set_num_threads", as: tessera_openblas_set_num_threads_fn.self)
        {
            setNumThreads(1)
        }
    }

    /// The CPU kernel family OpenBLAS chose (for example `SkylakeX`, `Haswell`, or `Prescott`
    /// for its generic fallback).
    package var coreName: String {
        guard let getCoreName, let name = getCoreName() else { return "unknown" }
        return String(cString: name)
    }

    /// OpenBLAS's build line (`openblas_get_config`), for example
    /// `OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64`.
    package var config: String {
        guard let getConfig, let text = getConfig() else { return "unknown" }
        return String(cString: text)
    }

    /// The number of threads OpenBLAS runs a call on (`openblas_get_num_threads`; 1 unless
    /// `OPENBLAS_NUM_THREADS` says otherwise).
    package var threadCount: Int { getNumThreads.map { Int($0()) } ?? 1 }

    /// One line for logs, demos and benchmark headers: kernel family, threads and origin, for
    /// example `SkylakeX, 1 thread, loaded by Tessera` or
    /// `SkylakeX, 1 thread, Tessera's own copy (the process's OpenBLAS runs Prescott)`.
    package var summary: String {
        let threads = threadCount == 1 ? "1 thread" : "\(threadCount) threads"
        let how: String
        switch origin {
        case .loadedByTessera: how = "loaded by Tessera"
        case .shared: how = "the process's OpenBLAS, loaded before Tessera"
        case .privateCopy(let processCoreName):
            how = "Tessera's own copy (the process's OpenBLAS runs \(processCoreName))"
        }
        return "\(coreName), \(threads), \(how)"
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

    /// The fastest OpenBLAS 0.3 kernel family for this CPU, from `/proc/cpuinfo`.
    static func preferredCoreType() -> String? {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Substring? {
            guard let line = info.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
                let colon = line.firstIndex(of: ":")
            else { return nil }
            return line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })
        }
        guard let flagLine = field("flags") else { return nil }
        let flags = Set(flagLine.split(separator: " ").map(String.init))
        let family = field("cpu family").flatMap { Int($0) }
        return coreType(flags: flags, vendor: field("vendor_id").map(String.init) ?? "", family: family)
    }

    /// The kernel family for a CPU with `flags`, from `vendor` (`GenuineIntel`, `AuthenticAMD`)
    /// and its `family` number.
    ///
    /// `SkylakeX` (AVX-512) where AVX-512 runs at full width, `Haswell` (AVX2 and FMA) otherwise
    /// and on AMD's family 25 (Zen 3 and Zen 4): Zen 4 runs each 512-bit operation as two
    /// 256-bit halves, and there OpenBLAS 0.3.21's `Haswell` SGEMM was 7 % faster than its
    /// `SkylakeX` one (`[256,512]×[512,1024]`, one thread: 2.48 against 2.66 ms).
    static func coreType(flags: Set<String>, vendor: String, family: Int?) -> String? {
        let halfWidthAVX512 = vendor == "AuthenticAMD" && (family ?? 0) <= 25
        if !halfWidthAVX512, ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"].allSatisfy(flags.contains) {
            return "SkylakeX"
        }
        if flags.contains("avx2") && flags.contains("fma") { return "Haswell" }
        return nil
    }
}

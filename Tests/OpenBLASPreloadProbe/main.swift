import COpenBLAS
import TesseraKernels

// A process that links OpenBLAS itself, as an app or library built with `-lopenblas` does: the
// library loads and initialises before any Tessera code runs, with whatever thread count and
// kernel family it picks on its own. `OpenBLASPreloadedTests` runs this binary and reads the
// `key=value` lines it prints: what the process's OpenBLAS ran before Tessera's first matrix
// product, what Tessera's OpenBLAS runs after it, and whether the product was right.

// Calling the library directly makes the link real (no `--as-needed` drops it).
let processCoreName = String(cString: openblas_get_corename())
let processThreadsBefore = openblas_get_num_threads()

let (m, n, k) = (96, 130, 200)
let a = (0..<(m * k)).map { Float(($0 * 37) % 101) / 101 - 0.5 }
let b = (0..<(k * n)).map { Float(($0 * 53) % 97) / 97 - 0.5 }
var c = [Float](repeating: 0, count: m * n)
GEMMKernels.sgemm(
    transposeA: false, transposeB: false, m: m, n: n, k: k, alpha: 1, a: a, lda: k, b: b, ldb: n, beta: 0, c: &c,
    ldc: n)
var maxError: Float = 0
for i in 0..<m {
    for j in 0..<n {
        var sum: Double = 0
        for p in 0..<k { sum += Double(a[i * k + p]) * Double(b[p * n + j]) }
        maxError = max(maxError, abs(Float(sum) - c[i * n + j]))
    }
}

let library = OpenBLASLibrary.shared
let origin: String
switch library.origin {
case .loadedByTessera: origin = "loadedByTessera"
case .shared: origin = "shared"
case .privateCopy: origin = "privateCopy"
}
print("process_core=\(processCoreName)")
print("process_threads_before=\(processThreadsBefore)")
print("process_threads_after=\(openblas_get_num_threads())")
print("origin=\(origin)")
print("tessera_core=\(library.coreName)")
print("tessera_threads=\(library.threadCount)")
print("summary=\(library.summary)")
print("max_error=\(maxError)")

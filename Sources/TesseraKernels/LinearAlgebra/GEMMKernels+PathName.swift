extension GEMMKernels {
    /// The name of the kernel path ``matmul(a:aLayout:b:bLayout:type:output:)`` takes for a
    /// product of `batchCount` `[m, k] × [k, n]` matrices of `type`, from the same thresholds it
    /// dispatches on: `loop GEMM` for many tiny products, else `OpenBLAS sgemm` (`dgemm` for
    /// float64; `float16 GEMM` and `integer loop GEMM` for the other types). For profiles
    /// (`tessera plan MODEL --measure`), which group measured time by path.
    package static func pathName(batchCount: Int, m: Int, n: Int, k: Int, type: KernelScalarType) -> String {
        switch type {
        case .float32, .float64:
            if batchCount >= smallBatchMinimum && m * n * k <= smallMatrixMultiplyAdds {
                return "loop GEMM (tiny batched)"
            }
            return type == .float32 ? "OpenBLAS sgemm" : "OpenBLAS dgemm"
        case .float16: return "float16 GEMM"
        default: return "integer loop GEMM"
        }
    }
}

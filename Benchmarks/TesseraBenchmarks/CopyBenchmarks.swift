import Foundation
import TesseraKernels

/// Copy kernels next to a plain `memcpy` of the same bytes, in GB/s of bytes written.
///
/// Figures count the output bytes once (a copy reads and writes each byte, so memory traffic
/// is about twice the figure).
func runCopyBenchmarks() {
    print("copy kernels (GB/s = output bytes / median time)")

    func gbps(_ bytes: Int, _ timing: Timing) -> String {
        String(format: "%6.2f GB/s", Double(bytes) / timing.median / 1e9)
    }

    func buffer(_ bytes: Int) -> UnsafeMutableRawPointer {
        let p = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        memset(p, 1, bytes)
        return p
    }

    func compare(
        _ name: String, bytes: Int, iterations: Int, _ body: (UnsafeRawPointer, UnsafeMutableRawPointer) -> Void
    ) {
        let src = buffer(bytes)
        let dst = buffer(bytes)
        defer {
            src.deallocate()
            dst.deallocate()
        }
        let kernel = measure(iterations: iterations) { body(src, dst) }
        let plain = measure(iterations: iterations) { memcpy(dst, src, bytes) }
        blackHole(dst)
        report(name, kernel, gbps(bytes, kernel))
        report("  memcpy, same bytes", plain, gbps(bytes, plain))
    }

    // transpose [4096, 4096] float32 (64 MiB)
    let square = StridedLayout(contiguous: [4096, 4096]).permuted([1, 0])
    compare("transpose [4096, 4096] f32", bytes: 4096 * 4096 * 4, iterations: 10) { src, dst in
        CopyKernels.copy(from: src, layout: square, elementSize: 4, to: dst)
    }

    // A transpose whose rows fit the caches better, and one whose row stride aliases in them.
    for n in [1000, 1024] {
        let layout = StridedLayout(contiguous: [n, n]).permuted([1, 0])
        compare("transpose [\(n), \(n)] f32", bytes: n * n * 4, iterations: 30) { src, dst in
            CopyKernels.copy(from: src, layout: layout, elementSize: 4, to: dst)
        }
    }

    // [1, 80, 3000] -> [1, 3000, 80] float32 (a mel spectrogram into time-major order)
    let mel = StridedLayout(contiguous: [1, 80, 3000]).permuted([0, 2, 1])
    compare("permute [1, 80, 3000] -> [1, 3000, 80] f32", bytes: 80 * 3000 * 4, iterations: 50) { src, dst in
        CopyKernels.copy(from: src, layout: mel, elementSize: 4, to: dst)
    }

    // two [32, 64, 64] float32 concatenated along axis 0
    let half = 32 * 64 * 64 * 4
    let part = StridedLayout(contiguous: [32, 64, 64])
    compare("concat 2 x [32, 64, 64] f32 axis 0", bytes: 2 * half, iterations: 100) { src, dst in
        CopyKernels.concatenate(inputs: [(src, part), (src + half, part)], axis: 0, elementSize: 4, to: dst)
    }

    // The same two inputs joined along the last axis: rows of 256 bytes interleave.
    compare("concat 2 x [32, 64, 64] f32 axis 2", bytes: 2 * half, iterations: 100) { src, dst in
        CopyKernels.concatenate(inputs: [(src, part), (src + half, part)], axis: 2, elementSize: 4, to: dst)
    }

    // fill of 4M float32 ones next to a memset of the same bytes
    let fillBytes = 4 << 20 * 4
    let target = buffer(fillBytes)
    defer { target.deallocate() }
    let one = UInt64(Float(1).bitPattern)
    let fill = measure(iterations: 30) {
        CopyKernels.fill(target, count: fillBytes / 4, elementSize: 4, bitPattern: one)
    }
    let plain = measure(iterations: 30) { memset(target, 1, fillBytes) }
    blackHole(target)
    report("fill 4M f32", fill, gbps(fillBytes, fill))
    report("  memset, same bytes", plain, gbps(fillBytes, plain))
}

import Foundation

extension KernelThreads {
    /// The handoff latency (``SpinningWorkers/handoffNanoseconds``) above which the cores
    /// running Tessera's loops count as far apart. On this project's two-vCPU machine the
    /// estimate's medians over a run were 80–111 ns (90th percentiles 85–117 ns) while a
    /// cache-line round trip between the cores took 60–130 ns, and 205–289 ns (10th percentiles
    /// 176–228 ns) while it took 310–350 ns. `TESSERA_FAR_HANDOFF_NS` overrides it.
    package static let farHandoffNanoseconds: Int =
        ProcessInfo.processInfo.environment["TESSERA_FAR_HANDOFF_NS"].flatMap { Int($0) } ?? 150

    /// Whether the cores running Tessera's loops are, as last measured, far apart: a loop takes
    /// more than ``farHandoffNanoseconds`` to reach a waiting worker. Then data one core writes
    /// and another reads costs several times what it does between near cores, and kernels
    /// choose splits that keep each thread on its own part (``DepthwiseBlock``). `false` with
    /// one thread or without spinning workers.
    ///
    /// ```swift
    /// let split = KernelThreads.coresAreFar ? "bands of rows" : "channel groups"
    /// ```
    package static var coresAreFar: Bool {
        guard coreBudget > 1, let handoff = SpinningWorkers.shared?.handoffNanoseconds else { return false }
        return handoff > farHandoffNanoseconds
    }
}

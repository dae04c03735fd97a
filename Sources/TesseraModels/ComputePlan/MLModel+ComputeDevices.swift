extension MLModel {
    /// The compute devices models can use on this machine: only the CPU on Linux.
    ///
    /// ```swift
    /// MLModel.availableComputeDevices     // [.cpu(MLCPUComputeDevice)]
    /// ```
    public static var availableComputeDevices: [MLComputeDevice] { MLComputeDevice.allComputeDevices }
}

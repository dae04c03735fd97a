/// A processing unit a model's operations can run on: Core ML's `MLComputeDevice`.
///
/// Tessera runs every operation on the CPU, so on Linux the only device that exists is
/// ``cpu(_:)``; the other cases are here so code written for Apple platforms compiles and
/// its `switch` statements stay exhaustive.
///
/// ```swift
/// for device in MLModel.availableComputeDevices {
///     if case .cpu = device { print("CPU available") }
/// }
/// ```
public enum MLComputeDevice: Sendable, Hashable, CustomStringConvertible {
    /// The CPU.
    case cpu(MLCPUComputeDevice)
    /// A GPU (never present on Linux).
    case gpu(MLGPUComputeDevice)
    /// The Neural Engine (never present on Linux).
    case neuralEngine(MLNeuralEngineComputeDevice)

    /// Every compute device of the machine: `[.cpu(…)]` on Linux.
    public static var allComputeDevices: [MLComputeDevice] { [.cpu(MLCPUComputeDevice())] }

    /// A short description: `"CPU"`, `"GPU"` or `"Neural Engine (N cores)"`.
    public var description: String {
        switch self {
        case .cpu: "CPU"
        case .gpu: "GPU"
        case .neuralEngine(let device): "Neural Engine (\(device.totalCoreCount) cores)"
        }
    }
}

/// What every compute device type has in common: Core ML's `MLComputeDeviceProtocol`.
public protocol MLComputeDeviceProtocol: Sendable {}

/// The CPU as a compute device. It has no public members, as on Apple platforms.
public struct MLCPUComputeDevice: MLComputeDeviceProtocol, Hashable {}

/// A GPU as a compute device. Linux has no Metal, so Tessera never creates one and
/// Apple's `metalDevice` property is not provided.
public struct MLGPUComputeDevice: MLComputeDeviceProtocol, Hashable {}

/// The Neural Engine as a compute device. Tessera never creates one.
public struct MLNeuralEngineComputeDevice: MLComputeDeviceProtocol, Hashable {
    /// The number of Neural Engine cores.
    public let totalCoreCount: Int
}

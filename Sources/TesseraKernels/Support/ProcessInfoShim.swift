import Foundation

/// The few process facts the kernel layer needs, read once.
enum ProcessInfoShim {
    static let physicalMemory: UInt64 = ProcessInfo.processInfo.physicalMemory
    static let activeProcessorCount: Int = Swift.max(1, ProcessInfo.processInfo.activeProcessorCount)
}

import Synchronization
import TesseraGraph
import TesseraKernels

/// A bounded cache of rank-0 constant tensors by value and type.
///
/// Scalar operands (`x * 1.0001`) are immutable once made, so one node can serve every use;
/// sharing them keeps a loop's graph to one leaf per distinct constant, which makes collection,
/// plan lookup and the fused program's inputs proportional to the real work.
final class ScalarConstantCache: Sendable {
    static let shared = ScalarConstantCache()
    private static let capacity = 1024

    private struct Key: Hashable {
        let bits: UInt64
        let type: KernelScalarType
    }

    private let entries = Mutex<[Key: MLTensor]>([:])

    /// The cached constant for `value` as `type`, made by `make` on a miss.
    func constant(_ value: Double, type: KernelScalarType, make: () -> MLTensor) -> MLTensor {
        let key = Key(bits: value.bitPattern, type: type)
        if let hit = entries.withLock({ $0[key] }) { return hit }
        let made = make()
        entries.withLock { entries in
            if entries.count >= ScalarConstantCache.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = made
        }
        return made
    }
}

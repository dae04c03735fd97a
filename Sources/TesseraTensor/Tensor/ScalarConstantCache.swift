import Synchronization
import TesseraGraph
import TesseraKernels

/// A bounded cache of rank-0 constant tensors by value and type.
///
/// Scalar operands (`x * 1.0001`) are immutable once made, so one node can serve every use;
/// sharing them keeps a loop's graph to one leaf per distinct constant, which makes collection,
/// plan lookup and the fused program's inputs proportional to the real work.
///
/// The cache is a direct-mapped table: a value's bits pick one of ``capacity`` slots, and a
/// newer constant that lands on an occupied slot replaces the older one. A lookup is one
/// multiply and one comparison under the lock (this runs once per scalar operand).
final class ScalarConstantCache: Sendable {
    static let shared = ScalarConstantCache()
    private static let capacityBits = 10
    private static let capacity = 1 << capacityBits

    private struct Slot {
        let bits: UInt64
        let type: KernelScalarType
        let tensor: MLTensor
    }

    private let slots = Mutex<[Slot?]>(Array(repeating: nil, count: ScalarConstantCache.capacity))

    /// The cached constant for `value` as `type`, made by `make` on a miss.
    func constant(_ value: Double, type: KernelScalarType, make: () -> MLTensor) -> MLTensor {
        let bits = value.bitPattern
        let mixed = (bits ^ (UInt64(type.rawValue) &<< 56)) &* 0x9E37_79B9_7F4A_7C15
        let index = Int(truncatingIfNeeded: mixed >> UInt64(64 - ScalarConstantCache.capacityBits))
        let hit: MLTensor? = slots.withLock { slots in
            guard let slot = slots[index], slot.bits == bits, slot.type == type else { return nil }
            return slot.tensor
        }
        if let hit { return hit }
        let made = make()
        slots.withLock { $0[index] = Slot(bits: bits, type: type, tensor: made) }
        return made
    }
}

import Synchronization
import TesseraKernels

/// The kernel operands a depthwise-block step resolved from its weights and biases on its last
/// run (``ExecutionPlan/runDepthwiseBlock(_:memo:values:)``), with the storage and offset each
/// points into.
///
/// A model runs the same constants every prediction, so a step whose weights and biases are
/// still those storages at those offsets takes its operands from here: no prepared-weight
/// lookups, compactions or graph entries between two parallel loops. (Resolving them took 2–4 µs
/// a step, about two thirds of what a MobileNetV2 block step spent outside its parallel loops.)
/// The memo holds each storage weakly: it keeps none alive, and a freed weight's address taken
/// by a new storage is not mistaken for it (the weak reference reads `nil` once the storage is
/// gone). Its pointers are used only while the run's values hold the storages they point into.
///
/// ```swift
/// if let operands = memo.operands(matching: values) { … } else { memo.remember(resolved) }
/// ```
final class DepthwiseBlockMemo: Sendable {
    /// A weight or bias the operands point into: its index in the run's values, its storage
    /// (weakly) and its layout's offset.
    struct Source {
        var value: Int
        weak var storage: TensorStorage?
        var offset: Int
    }

    /// The stages' operands (their clamps `.none`: bounds are read every run) and their sources.
    ///
    /// `@unchecked Sendable`: immutable once made; its pointers are read, never written, and
    /// only by a run that holds the storages they point into.
    struct Operands: @unchecked Sendable {
        var sources: [Source]
        var expand: DepthwiseBlockPointwise?
        var direct: DepthwiseBlockDirect?
        var depthwise: DepthwiseBlockDepthwise
        var project: DepthwiseBlockPointwise?
    }

    private let last = Mutex<Operands?>(nil)

    /// An empty memo.
    init() {}

    /// The remembered operands when every source is, in `values`, a compact value of the same
    /// storage at the same offset; `nil` otherwise (or before the first run).
    func operands(matching values: [TensorValue?]) -> Operands? {
        last.withLock { last -> Operands? in
            guard let last else { return nil }
            for source in last.sources {
                guard let value = values[source.value], let storage = source.storage, value.storage === storage,
                    value.layout.offset == source.offset, value.layout.isContiguous
                else { return nil }
            }
            return last
        }
    }

    /// Keeps `operands` for the next run, in place of the last ones.
    func remember(_ operands: Operands) {
        last.withLock { $0 = operands }
    }
}

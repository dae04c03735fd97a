import Synchronization
import TesseraTensor

/// What a value of a batched run depends on, as far as the batch goes.
enum BatchDependence: Equatable {
    /// The same in every run whatever the batch (constants and what is computed from them).
    case independent
    /// Batch data: the items are concatenated along this axis.
    case axis(Int)
    /// Not batch data, but computed from a batched value's shape (`shape` and the arithmetic
    /// on it): it may only give a reshape target or slice bounds.
    case shapeOnly
}

/// The shapes of one item's inputs (in the function's input order) and the batch count: what
/// decides whether a batch can run as one execution.
struct BatchKey: Hashable, Sendable {
    var shapes: [[Int]]
    var count: Int
}

/// Per function: which batch keys run as one execution (learned on first use, so a model that
/// is not separable does not rebuild its graph to find out on every call), and how many
/// batched executions ran.
final class BatchVerdicts: Sendable {
    private struct State {
        var verdicts: [BatchKey: Bool] = [:]
        var runs = 0
    }

    /// Verdicts kept before the table starts over (keys are item shapes and counts, which a
    /// caller varying both could make unbounded).
    private static let capacity = 256
    private let state = Mutex(State())

    /// Whether a batch of `key` runs as one execution, or `nil` when not yet known.
    func verdict(_ key: BatchKey) -> Bool? { state.withLock { $0.verdicts[key] } }

    /// Records whether a batch of `key` runs as one execution.
    func record(_ key: BatchKey, separable: Bool) {
        state.withLock { state in
            if state.verdicts.count >= BatchVerdicts.capacity { state.verdicts.removeAll(keepingCapacity: true) }
            state.verdicts[key] = separable
        }
    }

    /// Counts one batched execution.
    func countRun() { state.withLock { $0.runs += 1 } }

    /// The number of batched executions so far.
    var runs: Int { state.withLock { $0.runs } }
}

extension LoweredFunction {
    /// The number of batches that ran as one execution (for tests and benchmarks to see that
    /// batching happened).
    package var batchedExecutionCount: Int { batchVerdicts.runs }

    /// Builds one graph for `count` items whose inputs are concatenated along axis 0, when
    /// that is proven to give every item what it would get alone; `nil` when the batch must
    /// run as a loop.
    ///
    /// The proof is made the first time a key (item shapes, count) is seen: the graph is
    /// built for the first item and for the batch, and each step's ``BatchRule`` derives where
    /// the batch axis of its results is from its operands', checking that every batched value
    /// has the item's shape with that axis multiplied by `count`; every output must carry the
    /// batch on axis 0. The verdict is cached. A graph that throws while building also gives
    /// `nil` (the loop then reports the error per item).
    ///
    /// - Parameters:
    ///   - stacked: Every input, the items concatenated along axis 0 (and bound as ``run(_:)``
    ///     expects).
    ///   - firstItem: The first item's inputs; all items have the same shapes.
    ///   - count: The number of items, at least 2.
    /// - Returns: The outputs for the whole batch, lazy, each with dimension 0 equal to
    ///   `count` times the item's; split them along axis 0.
    package func runBatch(_ stacked: [String: MLTensor], firstItem: [String: MLTensor], count: Int)
        -> [String: MLTensor]?
    {
        guard count >= 2, stateOutputs.isEmpty, classifier == nil else { return nil }
        let key = BatchKey(shapes: inputs.map { firstItem[$0.name]?.shape ?? [] }, count: count)
        switch batchVerdicts.verdict(key) {
        case false?:
            return nil
        case true?:
            guard let outputs = try? run(stacked) else { return nil }
            batchVerdicts.countRun()
            return outputs
        case nil:
            var batchValues: [MLTensor?] = []
            let separable: Bool
            do {
                let itemValues = try evaluate(firstItem)
                batchValues = try evaluate(stacked)
                separable = isSeparable(item: itemValues, batch: batchValues, count: count)
            } catch {
                separable = false
            }
            batchVerdicts.record(key, separable: separable)
            guard separable else { return nil }
            batchVerdicts.countRun()
            return outputs(from: batchValues)
        }
    }

    /// Whether the batched value table computes, for every item, what the item's table does:
    /// every step's rule accepts its operands' batch axes and every batched value has the
    /// item's shape with the batch axis multiplied by `count`.
    func isSeparable(item: [MLTensor?], batch: [MLTensor?], count: Int) -> Bool {
        var dependence = [BatchDependence](repeating: .independent, count: slotCount)
        for slot in inputSlots {
            guard let itemValue = item[slot], let batchValue = batch[slot],
                Self.isBatched(item: itemValue.shape, batch: batchValue.shape, axis: 0, count: count)
            else { return false }
            dependence[slot] = .axis(0)
        }
        for step in steps {
            let kinds = step.operands.map { dependence[$0] }
            let results: [BatchDependence]
            if kinds.allSatisfy({ $0 == .independent }) {
                results = Array(repeating: .independent, count: step.results.count)
            } else if !kinds.contains(where: { if case .axis = $0 { true } else { false } }) {
                results = Array(repeating: .shapeOnly, count: step.results.count)
            } else {
                let context = BatchStepShapes(step: step, item: item, batch: batch, kinds: kinds, count: count)
                guard let derived = context.resultDependence() else { return false }
                results = derived
            }
            for (index, slot) in step.results.enumerated() {
                if case .axis(let axis) = results[index] {
                    guard let itemValue = item[slot], let batchValue = batch[slot],
                        Self.isBatched(item: itemValue.shape, batch: batchValue.shape, axis: axis, count: count)
                    else { return false }
                }
                dependence[slot] = results[index]
            }
        }
        return outputSlots.allSatisfy { dependence[$0.slot] == .axis(0) }
    }

    /// Whether `batch` is `item` with dimension `axis` multiplied by `count`.
    static func isBatched(item: [Int], batch: [Int], axis: Int, count: Int) -> Bool {
        guard item.count == batch.count, axis >= 0, axis < item.count else { return false }
        for index in item.indices where batch[index] != (index == axis ? count * item[index] : item[index]) {
            return false
        }
        return true
    }
}

/// One step of a batched run, seen by its rule: the operands' batch dependence and the
/// operand and result shapes in the item's graph and in the batch's.
struct BatchStepShapes {
    let step: LoweredStep
    let item: [MLTensor?]
    let batch: [MLTensor?]
    let kinds: [BatchDependence]
    let count: Int

    /// Operand `position`'s shape in the batch's graph.
    func shape(_ position: Int) -> [Int] { batch[step.operands[position]]?.shape ?? [] }
    /// Result `index`'s shapes in the item's and the batch's graphs.
    func resultShapes(_ index: Int = 0) -> (item: [Int], batch: [Int]) {
        (item[step.results[index]]?.shape ?? [], batch[step.results[index]]?.shape ?? [])
    }

    /// The batch axis of operand `position`, `nil` when it is not batch data.
    func axis(_ position: Int) -> Int? {
        guard position < kinds.count, case .axis(let axis) = kinds[position] else { return nil }
        return axis
    }

    /// Whether every operand from `position` on is batch-independent.
    func independent(from position: Int) -> Bool { kinds.dropFirst(position).allSatisfy { $0 == .independent } }

    /// `axes` normalized for `rank` (negative from the end), `nil` when one is out of range.
    static func normalized(_ axes: [Int], rank: Int) -> [Int]? {
        let result = axes.map { $0 < 0 ? $0 + rank : $0 }
        return result.allSatisfy { $0 >= 0 && $0 < rank } ? result : nil
    }

    /// The dependence of each result, or `nil` when the step would mix items.
    func resultDependence() -> [BatchDependence]? {
        guard let axis = resultAxis() else {
            if step.batchRule == .shapeOf, axis(0) != nil { return [.shapeOnly] }
            return nil
        }
        return Array(repeating: .axis(axis), count: step.results.count)
    }

    /// The batch axis of the results (all results share it), or `nil` when the step would mix
    /// items.
    private func resultAxis() -> Int? {
        switch step.batchRule {
        case .elementwise: return rightAligned(minimumFromEnd: 0)
        case .attention: return rightAligned(minimumFromEnd: 2)
        case .alongAxes(let axes):
            guard let a = axis(0), independent(from: 1), let axes,
                let mixed = Self.normalized(axes, rank: shape(0).count), !mixed.contains(a)
            else { return nil }
            return a
        case .reduction(let axes, let keepDims):
            guard let a = axis(0), independent(from: 1), let axes,
                let reduced = Self.normalized(axes, rank: shape(0).count), !reduced.contains(a)
            else { return nil }
            return keepDims ? a : a - reduced.filter { $0 < a }.count
        case .transpose(let perm):
            guard let a = axis(0), perm.count == shape(0).count else { return nil }
            return perm.firstIndex(of: a) ?? perm.firstIndex(of: a - perm.count)
        case .reshape: return reshapeAxis()
        case .matmul(let transposeX, let transposeY): return matmulAxis(transposeX: transposeX, transposeY: transposeY)
        case .linear:
            guard let a = axis(0), a < shape(0).count - 1, independent(from: 1) else { return nil }
            return a
        case .leadingAxis:
            guard axis(0) == 0, independent(from: 1) else { return nil }
            return 0
        case .concat(let along):
            guard let a = axis(0), kinds.allSatisfy({ $0 == .axis(a) }),
                let c = Self.normalized([along], rank: shape(0).count)?.first, c != a
            else { return nil }
            return a
        case .stack(let along):
            guard let a = axis(0), kinds.allSatisfy({ $0 == .axis(a) }),
                let n = Self.normalized([along], rank: shape(0).count + 1)?.first
            else { return nil }
            return a >= n ? a + 1 : a
        case .split(let along):
            guard let a = axis(0), kinds.count == 1, let c = Self.normalized([along], rank: shape(0).count)?.first,
                c != a
            else { return nil }
            return a
        case .tile(let reps):
            let rank = shape(0).count
            guard let a = axis(0), reps.count >= rank, reps[reps.count - rank + a] == 1 else { return nil }
            return reps.count - rank + a
        case .pad(let pad):
            let (rank, padded) = (shape(0).count, pad.count / 2)
            guard let a = axis(0), padded <= rank else { return nil }
            let i = a - (rank - padded)
            guard i < 0 || (pad[2 * i] == 0 && pad[2 * i + 1] == 0) else { return nil }
            return a
        case .slice(let strides, let squeeze): return sliceAxis(strides: strides, squeeze: squeeze)
        case .gather(let along): return gatherAxis(along)
        case .shapeOf, .notSeparable: return nil
        }
    }

    /// Broadcasting: every batched operand has the batch axis at the same distance `k` from
    /// its end (more than `minimumFromEnd`), and every batch-independent one has size 1 there
    /// or is shorter.
    private func rightAligned(minimumFromEnd: Int) -> Int? {
        var fromEnd: Int?
        for position in kinds.indices {
            guard let a = axis(position) else { continue }
            let k = shape(position).count - a
            guard fromEnd == nil || fromEnd == k else { return nil }
            fromEnd = k
        }
        let resultRank = resultShapes().batch.count
        guard let k = fromEnd, k > minimumFromEnd, k <= resultRank else { return nil }
        for (position, kind) in kinds.enumerated() {
            let operand = shape(position)
            switch kind {
            case .shapeOnly: return nil
            case .independent where operand.count >= k && operand[operand.count - k] != 1: return nil
            default: break
            }
        }
        return resultRank - k
    }

    /// A row-major reshape keeps each item one contiguous run inside each group of the
    /// dimensions before the batch axis: the result's batch axis is where its item and batch
    /// shapes differ, and the dimensions before it hold as many elements as those before the
    /// operand's batch axis.
    ///
    /// A target read from batch data (not from shapes) would make the verdict depend on values,
    /// so only `reshape_like`'s reference tensors, whose shapes alone are read, may be batched.
    private func reshapeAxis() -> Int? {
        guard let a = axis(0),
            step.type == "reshape_like"
                || !kinds.dropFirst().contains(where: { $0 != .independent && $0 != .shapeOnly })
        else { return nil }
        let (itemResult, batchResult) = resultShapes()
        guard itemResult.count == batchResult.count,
            let d = itemResult.indices.first(where: { itemResult[$0] != batchResult[$0] })
        else { return nil }
        let operand = shape(0)
        guard batchResult[..<d].reduce(1, *) == operand[..<a].reduce(1, *) else { return nil }
        return d
    }

    /// `matmul`: the batch axis may be a broadcast batch dimension (the same one in both
    /// operands when both are batched; size 1 or absent in a batch-independent one), the rows
    /// of `x` or the columns of `y` (the other operand independent), never a contracted axis.
    private func matmulAxis(transposeX: Bool, transposeY: Bool) -> Int? {
        guard kinds.count == 2, !kinds.contains(.shapeOnly) else { return nil }
        let (x, y) = (shape(0), shape(1))
        let resultRank = resultShapes().batch.count
        let (vectorX, vectorY) = (x.count == 1, y.count == 1)
        let resultBatchRank = resultRank - (vectorX ? 0 : 1) - (vectorY ? 0 : 1)
        // Position among the broadcast batch dimensions, counted from their end (1 = last).
        func batchPosition(_ a: Int, rank: Int) -> Int? { a < rank - 2 ? rank - 2 - a : nil }
        func fits(independent shape: [Int], position k: Int) -> Bool {
            let batchRank = Swift.max(shape.count - 2, 0)
            return batchRank < k || shape[batchRank - k] == 1
        }
        switch (axis(0), axis(1)) {
        case (let a?, nil):
            if !vectorX, a == (transposeX ? x.count - 1 : x.count - 2) {
                return vectorY ? resultRank - 1 : resultRank - 2
            }
            guard let k = batchPosition(a, rank: x.count), fits(independent: y, position: k) else { return nil }
            return resultBatchRank - k
        case (nil, let b?):
            if !vectorY, b == (transposeY ? y.count - 2 : y.count - 1) { return resultRank - 1 }
            guard let k = batchPosition(b, rank: y.count), fits(independent: x, position: k) else { return nil }
            return resultBatchRank - k
        case (let a?, let b?):
            guard let k = batchPosition(a, rank: x.count), batchPosition(b, rank: y.count) == k else { return nil }
            return resultBatchRank - k
        default:
            return nil
        }
    }

    /// Slices: the whole batch axis with stride 1, not squeezed; bounds computed from shapes
    /// must be the same in the item's and the batch's graphs on every other axis.
    private func sliceAxis(strides: [Int]?, squeeze: [Bool]?) -> Int? {
        guard let a = axis(0), (strides.map { a < $0.count ? $0[a] : 0 } ?? 1) == 1,
            !(squeeze.map { a < $0.count ? $0[a] : true } ?? false)
        else { return nil }
        let resultAxis = a - (squeeze?.prefix(a).filter { $0 }.count ?? 0)
        let (itemResult, batchResult) = resultShapes()
        let itemOperand = item[step.operands[0]]?.shape ?? []
        guard resultAxis < itemResult.count, itemResult[resultAxis] == itemOperand[a],
            batchResult[resultAxis] == shape(0)[a]
        else { return nil }
        for position in kinds.indices.dropFirst() {
            switch kinds[position] {
            case .axis: return nil
            case .independent: continue
            case .shapeOnly:
                guard let itemBound = item[step.operands[position]], let batchBound = batch[step.operands[position]]
                else { return nil }
                // Read as the step reads them; an unusable bound (not a short list, NaN, infinite,
                // huge) leaves the step unbatched.
                guard let i = try? RuntimeInts.operand(0).values([itemBound]),
                    let b = try? RuntimeInts.operand(0).values([batchBound]), i.count == b.count,
                    i.indices.allSatisfy({ $0 == a || i[$0] == b[$0] })
                else { return nil }
            }
        }
        return resultAxis
    }

    /// `gather` without batch dims: the batch on a non-gathered axis of `x` with independent
    /// indices, or on any axis of the indices with an independent `x`.
    private func gatherAxis(_ along: Int) -> Int? {
        guard kinds.count == 2, let c = Self.normalized([along], rank: shape(0).count)?.first else { return nil }
        switch (kinds[0], kinds[1]) {
        case (.axis(let a), .independent) where a != c: return a < c ? a : a + shape(1).count - 1
        case (.independent, .axis(let b)): return c + b
        default: return nil
        }
    }
}

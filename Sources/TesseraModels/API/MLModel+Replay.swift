import Foundation
import Synchronization
import TesseraGraph
import TesseraKernels
import TesseraTensor

/// A model's recorded prediction plan, run again on new inputs instead of building the graph.
///
/// Every prediction of a program builds the graph of its outputs from its inputs (one lazy
/// node per operation), collects it, looks its plan up by structure and runs it. For a model
/// whose graph depends on its inputs only through the graph, the first two steps give the same
/// result every time the inputs have the same shapes: the same plan on the same constants.
/// So the first prediction for some input shapes records its run
/// (``GraphExecutor/materializeRecording(_:inputs:memoryLimit:onTaskThread:)``), the second
/// builds the graph once more and checks that it recorded the same run (the same cached plan,
/// the same constant storages, the inputs in the same places:
/// ``RecordedPlan/isSameRun(as:)``; a build that recorded another run is kept in its place
/// once, see ``allowedMisses``), and from then on a prediction binds its inputs and runs the
/// recorded plan (``GraphExecutor/replay(_:inputs:memoryLimit:onTaskThread:)``),
/// producing the same bits. MobileNetV2's graph build, collection and plan lookup took ~4 % of
/// its one-thread prediction.
///
/// A build that computed anything, read an input's elements (to fold a value into the
/// graph, as a runtime-sized `range_1d` or a scalar `fill` does) or made values on the host
/// (random draws) is counted by ``BuildReads`` and turns replay off for the model, as do
/// builds that keep recording different runs (new constants each time). So do stateful
/// models, inputs that are not plain values (images are preprocessed in the graph), and
/// outputs the graph does not compute. Those predict as before, building their graph each time.
final class PredictionReplay: Sendable {
    /// A recorded run and the outputs it fills.
    struct Recording: @unchecked Sendable {
        let plan: RecordedPlan
        /// The prediction's outputs with placeholders where its tensors go
        /// (``PendingOutputs/replacingTensors(_:)``).
        let outputs: PendingOutputs
    }

    private enum Phase {
        /// Recorded; the next build for the same input shapes confirms it, or records again
        /// (`misses` counts the builds that recorded another run).
        case recorded(Recording, misses: Int)
        /// Checked: predictions with these input shapes replay it.
        case confirmed(Recording)
        /// Not replayable: every prediction builds its graph.
        case refused
    }

    private let phase = Mutex<Phase?>(PredictionReplay.enabled ? nil : .refused)

    /// Whether models may replay: unless the environment variable `TESSERA_REPLAY` is `0` (for
    /// A/B runs against building every prediction's graph).
    static let enabled = ProcessInfo.processInfo.environment["TESSERA_REPLAY"] != "0"

    /// What a prediction does now: replay is off (`refused`), or it may replay `confirmed`
    /// when that is not `nil`, else build and record. One read of the state.
    var current: (refused: Bool, confirmed: Recording?) {
        phase.withLock { phase in
            switch phase {
            case .refused: (true, nil)
            case .confirmed(let recording): (false, recording)
            case .recorded, nil: (false, nil)
            }
        }
    }

    /// The recording predictions may replay, once confirmed.
    var confirmed: Recording? { current.confirmed }

    /// Whether replay is off for the model.
    var isRefused: Bool { current.refused }

    /// Turns replay off for the model.
    func refuse() { phase.withLock { $0 = .refused } }

    /// How many builds for the same input shapes may record another run before replay is
    /// turned off. The second build of a model can differ from the first once (a constant
    /// expression the first prediction computed is a leaf from then on); a graph that makes new
    /// constants on every build differs every time.
    static let allowedMisses = 1

    /// Takes a prediction's recording: the first for its input shapes is kept; a later one for
    /// the same shapes confirms it when it recorded the same run, and else replaces it, or
    /// turns replay off after ``allowedMisses`` such misses; a recording for other shapes
    /// replaces the one kept. `nil` (the run could not be recorded) turns replay off.
    func offer(_ recording: Recording?) {
        phase.withLock { phase in
            guard let recording else {
                phase = .refused
                return
            }
            switch phase {
            case .refused: return
            case nil: phase = .recorded(recording, misses: 0)
            case .confirmed(let kept):
                // Only builds for other shapes are offered while a recording is confirmed.
                if !kept.plan.hasSameInputs(as: recording.plan) { phase = .recorded(recording, misses: 0) }
            case .recorded(let kept, let misses):
                if !kept.plan.hasSameInputs(as: recording.plan) {
                    phase = .recorded(recording, misses: 0)
                } else if recording.plan.isSameRun(as: kept.plan) {
                    phase = .confirmed(kept)
                } else {
                    phase = misses < Self.allowedMisses ? .recorded(recording, misses: misses + 1) : .refused
                }
            }
        }
    }
}

extension MLModel {
    /// The outputs for bound `inputs`, computed: by the confirmed recorded plan when the inputs
    /// fit it, else by building the graph (recording the run while replay may still be
    /// confirmed; see ``PredictionReplay``). `onTaskThread` for `async` callers (loops that find
    /// the kernel workers busy stay on this thread).
    ///
    /// - Throws: ``MLModelError``, as ``runProgram(_:)`` and the memory limit's check do.
    func computedOutputs(_ inputs: [String: MLTensor], onTaskThread: Bool) throws -> PendingOutputs {
        let limit = configurationSnapshot.memoryLimit
        let state = replay.current
        let nodes = state.refused ? nil : replayableInputNodes(inputs)
        if let nodes, let recording = state.confirmed {
            let values = nodes.map { $0.value! }
            let replayed: [TensorValue]?
            do {
                replayed = try GraphExecutor.replay(
                    recording.plan, inputs: values, memoryLimit: limit, onTaskThread: onTaskThread)
            } catch {
                throw memoryLimitError(error)
            }
            if let replayed { return recording.outputs.replacingTensors(replayed.map(MLTensor.init(value:))) }
        }
        guard let nodes else {
            let pending = try pendingOutputs(runProgram(inputs))
            try materializeOutputs(pending.tensors, onTaskThread: onTaskThread)
            return pending
        }
        let (results, reads) = try BuildReads.counting(watching: nodes) { try runProgram(inputs) }
        let pending = try pendingOutputs(results)
        let requested = pending.tensors.compactMap(\.storedNode)
        guard reads == 0, requested.count == pending.tensors.count else {
            replay.refuse()
            try materializeOutputs(pending.tensors, onTaskThread: onTaskThread)
            return pending
        }
        let recorded: RecordedPlan?
        do {
            recorded = try GraphExecutor.materializeRecording(
                requested, inputs: nodes, memoryLimit: limit, onTaskThread: onTaskThread)
        } catch {
            throw memoryLimitError(error)
        }
        let placeholders = pending.tensors.map { _ in MLTensor(repeating: 0, shape: [1]) }
        replay.offer(recorded.map { .init(plan: $0, outputs: pending.replacingTensors(placeholders)) })
        return pending
    }

    /// The bound inputs' nodes in the function's order when a prediction may replay or record:
    /// a stateless program, every input a node holding its elements; `nil` otherwise.
    private func replayableInputNodes(_ inputs: [String: MLTensor]) -> [Node]? {
        guard stateBindings.isEmpty else { return nil }
        var nodes: [Node] = []
        nodes.reserveCapacity(bindings.count)
        for binding in bindings {
            guard let node = inputs[binding.name]?.storedNode, node.value != nil else { return nil }
            nodes.append(node)
        }
        return nodes
    }

    /// Computes `tensors` within the memory limit (``materializeWithinMemoryLimit(_:)``), for an
    /// `async` caller's thread when `onTaskThread`.
    private func materializeOutputs(_ tensors: [MLTensor], onTaskThread: Bool) throws {
        guard onTaskThread else { return try materializeWithinMemoryLimit(tensors) }
        try KernelThreads.withoutDispatchFallback { try materializeWithinMemoryLimit(tensors) }
    }
}

extension PendingOutputs {
    /// The same outputs made from `tensors`, given in ``tensors`` order.
    func replacingTensors(_ tensors: [MLTensor]) -> PendingOutputs {
        var copy = self
        for index in copy.features.indices { copy.features[index].tensor = tensors[index] }
        if let classifier = copy.classifier {
            copy.classifier = (
                tensors[copy.features.count], classifier.labels, classifier.labelName, classifier.probabilitiesName
            )
        }
        return copy
    }
}

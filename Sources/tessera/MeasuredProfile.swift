import Tessera
import TesseraGraph

/// Predictions timed with the executor's step profile on (``StepProfile``), for
/// `tessera plan MODEL --measure`: where a model's time goes, by operation, by kernel path and
/// by kind of plan step, from the wall time of every step of every timed prediction.
struct MeasuredProfile {
    /// The steps of one operation, kernel path or step kind, over all timed predictions.
    struct Group: Equatable {
        var name: String
        /// Steps in the group per prediction.
        var steps: Int
        /// Their total wall time over all timed predictions.
        var nanoseconds: UInt64
    }

    /// Timed predictions.
    let runs: Int
    /// Wall time of each timed prediction, in milliseconds, sorted.
    let predictionMilliseconds: [Double]
    /// The plan runs recorded (one per prediction, more when building a prediction's graph
    /// ran small plans of its own, as a shape computed at run time does).
    let planRuns: [StepProfile.Run]
    let byOperation: [Group]
    let byPath: [Group]
    let byKind: [Group]

    /// Loads the model at `url` and times `runs` predictions on random inputs in `[-1, 1]`
    /// (after two untimed warm-ups), each inside a step profile.
    ///
    /// - Throws: `CLIError` for a model with an input that is not a multi-array; the model's
    ///   own errors.
    init(url: URL, functionName: String?, runs: Int) throws {
        let configuration = MLModelConfiguration()
        configuration.functionName = functionName
        let model = try MLModel(contentsOf: url, configuration: configuration)
        var features: [String: MLFeatureValue] = [:]
        var generator = SystemRandomNumberGenerator()
        for (name, feature) in model.modelDescription.inputDescriptionsByName {
            guard let constraint = feature.multiArrayConstraint else {
                throw CLIError("--measure needs multi-array inputs; \(name) is \(feature.type)")
            }
            let shape = constraint.shape.map(\.intValue)
            let count = shape.reduce(1, *)
            let scalars = (0..<count).map { _ in Float.random(in: -1...1, using: &generator) }
            features[name] = MLFeatureValue(shapedArray: MLShapedArray<Float>(scalars: scalars, shape: shape))
        }
        let input = try MLDictionaryFeatureProvider(dictionary: features)
        for _ in 0..<2 { _ = try model.prediction(from: input) }
        let profile = StepProfile()
        var times: [Double] = []
        try GraphExecutor.withStepProfile(profile) {
            for _ in 0..<runs {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try model.prediction(from: input)
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
        }
        self.init(profile: profile, predictionMilliseconds: times)
    }

    /// The groups of the plan runs `profile` recorded over `predictionMilliseconds.count`
    /// predictions.
    init(profile: StepProfile, predictionMilliseconds: [Double]) {
        runs = predictionMilliseconds.count
        self.predictionMilliseconds = predictionMilliseconds.sorted()
        planRuns = profile.runs
        let steps = planRuns.flatMap(\.steps)
        func grouped(_ key: (StepProfile.Step) -> String) -> [Group] {
            var groups: [String: Group] = [:]
            for step in steps {
                groups[key(step), default: Group(name: key(step), steps: 0, nanoseconds: 0)].nanoseconds +=
                    step.nanoseconds
                groups[key(step)]!.steps += 1
            }
            let perPrediction = Swift.max(1, predictionMilliseconds.count)
            return groups.values.map {
                Group(name: $0.name, steps: $0.steps / perPrediction, nanoseconds: $0.nanoseconds)
            }
            .sorted { ($0.nanoseconds, $1.name) > ($1.nanoseconds, $0.name) }
        }
        byOperation = grouped(\.operation)
        byPath = grouped(\.path)
        byKind = grouped(\.kind)
    }

    /// The steps' total wall time over all timed predictions.
    var stepNanoseconds: UInt64 { planRuns.reduce(0) { $0 + $1.steps.reduce(0) { $0 + $1.nanoseconds } } }

    /// The timed predictions' total wall time, in nanoseconds.
    var predictionNanoseconds: Double { predictionMilliseconds.reduce(0, +) * 1e6 }

    /// The `count` steps with the most time over all timed predictions (a step of the
    /// prediction's plan summed over its runs; `nanoseconds` is that sum).
    func slowestSteps(_ count: Int) -> [StepProfile.Step] {
        var byStep: [Int: StepProfile.Step] = [:]
        // The prediction's own plan is the one with the most steps; small plans a graph build
        // ran (shape expressions) are left out.
        let longest = planRuns.map(\.steps.count).max() ?? 0
        for run in planRuns where run.steps.count == longest {
            for step in run.steps {
                var total = byStep[step.index] ?? step
                if byStep[step.index] != nil { total.nanoseconds += step.nanoseconds }
                byStep[step.index] = total
            }
        }
        return Array(byStep.values.sorted { $0.nanoseconds > $1.nanoseconds }.prefix(count))
    }

    /// The tables `tessera plan --measure` prints; with `allSteps` (`--all`) every step is listed
    /// in plan order instead of the ten slowest.
    func report(allSteps: Bool = false) -> String {
        guard runs > 0 else { return "no predictions timed" }
        let median = predictionMilliseconds[runs / 2]
        let mean = predictionNanoseconds / 1e6 / Double(runs)
        let stepsMean = Double(stepNanoseconds) / 1e6 / Double(runs)
        var lines = [
            String(
                format: "measured over %d predictions: median %.3f ms, mean %.3f ms; the plan steps take %.3f ms "
                    + "of the mean (%.0f%%), the rest is building the graph, binding inputs and reading outputs",
                runs, median, mean, stepsMean, mean > 0 ? 100 * stepsMean / mean : 0)
        ]
        for (title, groups) in [("operation", byOperation), ("kernel path", byPath), ("step kind", byKind)] {
            lines.append("")
            lines.append(
                PlanCommand.pad("by \(title)", 58) + PlanCommand.pad("steps", 6, right: true)
                    + PlanCommand.pad("ms", 10, right: true) + PlanCommand.pad("share", 8, right: true))
            for group in groups {
                let milliseconds = Double(group.nanoseconds) / 1e6 / Double(runs)
                lines.append(
                    PlanCommand.pad("  " + group.name, 58) + PlanCommand.pad(String(group.steps), 6, right: true)
                        + PlanCommand.pad(String(format: "%.3f", milliseconds), 10, right: true)
                        + PlanCommand.pad(
                            String(format: "%.1f%%", mean > 0 ? 100 * milliseconds / mean : 0), 8, right: true))
            }
        }
        lines.append("")
        lines.append(
            allSteps ? "every step in plan order (mean ms per prediction)" : "slowest steps (mean ms per prediction)")
        let listed = allSteps ? slowestSteps(Int.max).sorted { $0.index < $1.index } : slowestSteps(10)
        for step in listed {
            lines.append(
                PlanCommand.pad("  #\(step.index) \(step.kind) \(step.operation) → \(step.shape)", 58)
                    + PlanCommand.pad(
                        String(format: "%.3f", Double(step.nanoseconds) / 1e6 / Double(runs)), 16, right: true)
                    + "  " + step.path)
        }
        lines.append("")
        lines.append(
            "(ms: wall time per prediction, the mean over the timed predictions; share: of the mean prediction)")
        return lines.joined(separator: "\n")
    }
}

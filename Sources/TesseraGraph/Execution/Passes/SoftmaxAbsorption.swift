/// Streams a fused program into the softmax (or log-softmax) that is its only reader.
///
/// A softmax along the last axis (axis 1 or later), whose input is a fusion root nothing else
/// reads and the caller did not ask for, becomes one
/// ``ExecutionPlan/Step/fusedSoftmax(entry:program:leaves:producer:)`` step: chunks of
/// leading-axis rows go through the program into a scratch block and straight on through the
/// softmax kernel. Writes `softmaxProducer` and marks the producer `absorbed`.
enum SoftmaxAbsorption {
    static func run(_ state: inout PlanningState) {
        for i in state.entries.indices where state.isLive(i) {
            let axis: Int
            switch state.entries[i].op {
            case .softmax(let a), .logSoftmax(let a): axis = a
            default: continue
            }
            guard let producer = state.streamableProducer(of: i, axes: [axis]) else { continue }
            state.absorbed.insert(producer)
            state.softmaxProducer[i] = producer
        }
    }
}

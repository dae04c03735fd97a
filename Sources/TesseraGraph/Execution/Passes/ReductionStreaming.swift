/// Streams a fused program into the reduction that is its only reader.
///
/// A reduction (not `argmax`/`argmin`) over trailing axes from axis 1 on, whose input is a
/// fusion root nothing else reads and the caller did not ask for, becomes one
/// ``ExecutionPlan/Step/fusedReduce(entry:program:leaves:producer:)`` step: chunks of
/// leading-axis rows go through the program into a cache-sized scratch block and are reduced
/// straight away, so the program's result never goes to memory. Writes `reduceProducer` and
/// marks the producer `absorbed`.
///
/// A producer that ``ConvolutionEpilogueFusion`` can make the epilogue of a convolution or
/// matrix product is left to it (the clamp before a global pool: free inside the product, whose
/// result is written either way).
enum ReductionStreaming {
    static func run(_ state: inout PlanningState) {
        let programsReading = ConvolutionEpilogueFusion.programsReading(state)
        for i in state.entries.indices where state.isLive(i) {
            guard case .reduce(let op, let axes) = state.entries[i].op, op != .argmax, op != .argmin,
                let producer = state.streamableProducer(of: i, axes: axes),
                ConvolutionEpilogueFusion.epilogue(for: producer, in: state, programsReading: programsReading) == nil
            else { continue }
            state.absorbed.insert(producer)
            state.reduceProducer[i] = producer
        }
    }
}

import TesseraTensor

extension MILOp {
    /// The parameters `slice_by_index` and `slice_update` share (`begin`, `end`, `stride` and
    /// the three masks), read once at load, and the per-axis selection they make of a shape.
    struct SliceByIndexParameters: Sendable {
        /// What the slice takes along one axis: `count` indices from `start`, `step` apart;
        /// a `squeezed` axis takes the single index `start` (negative `begin` counted from the
        /// end, not yet checked against the axis) and leaves the result's shape.
        struct AxisSelection {
            let start: Int
            let step: Int
            let count: Int
            let squeezed: Bool
        }

        let begin: RuntimeInts
        let end: RuntimeInts
        let stride: [Int]?
        let beginMask: [Bool]?
        let endMask: [Bool]?
        let squeezeMask: [Bool]?

        /// Reads the parameters of the operation being lowered; `begin` and `end` may be
        /// operands read when the prediction is built.
        init(_ lowering: inout OperationLowering) throws {
            begin = try lowering.required(lowering.runtimeInts("begin"), "begin")
            end = try lowering.required(lowering.runtimeInts("end"), "end")
            stride = try lowering.ints("stride")
            beginMask = try lowering.bools("begin_mask")
            endMask = try lowering.bools("end_mask")
            squeezeMask = try lowering.bools("squeeze_mask")
        }

        /// The selection along every axis of `shape`, as Python's `x[begin:end:stride]` with
        /// the masks; throws when a list's length is not the rank or a stride is 0.
        func selection(of shape: [Int], _ args: [MLTensor]) throws -> [AxisSelection] {
            let rank = shape.count
            let (begin, end) = (try begin.values(args), try end.values(args))
            for list in [begin, end, stride ?? begin] {
                try require(list.count == rank, "begin/end/stride need \(rank) values for x \(shape)")
            }
            for mask in [beginMask, endMask, squeezeMask] {
                try require((mask?.count ?? rank) == rank, "masks need \(rank) values for x \(shape)")
            }
            return try (0..<rank).map { axis in
                let size = shape[axis]
                let step = stride?[axis] ?? 1
                try require(step != 0, "stride 0 on axis \(axis)")
                if squeezeMask?[axis] == true {
                    let index = begin[axis] < 0 ? begin[axis] + size : begin[axis]
                    return AxisSelection(start: index, step: 1, count: 1, squeezed: true)
                }
                let range = pythonSlice(
                    size: size, start: beginMask?[axis] == true ? nil : begin[axis],
                    stop: endMask?[axis] == true ? nil : end[axis], step: step)
                return AxisSelection(
                    start: range.count > 0 ? range.start : 0, step: step, count: range.count, squeezed: false)
            }
        }
    }
}

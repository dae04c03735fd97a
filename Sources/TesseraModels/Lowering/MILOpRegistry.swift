/// Every MIL op type Tessera runs, by name: the one table the lowering, the batching rules
/// and the compute plan's cost model read.
///
/// An op type appears here through its area's list (`Lowering/Ops/MILOps+<Area>.swift`); a
/// new area file adds its list to ``areas``. A name registered twice traps the first time
/// the table is used, naming the op type.
enum MILOpRegistry {
    /// The area lists, each the ops of one file under `Lowering/Ops/`.
    static let areas: [[MILOp]] = [
        MILOp.constantOps, MILOp.stateOps, MILOp.elementwiseOps, MILOp.activationOps, MILOp.linearAlgebraOps,
        MILOp.classifierOps,
        MILOp.convolutionOps, MILOp.resizingOps, MILOp.resizeOps, MILOp.normalizationOps, MILOp.reductionOps,
        MILOp.shapeOps,
        MILOp.indexingOps,
        MILOp.einsumOps, MILOp.scatterOps, MILOp.spaceBatchOps, MILOp.l2PoolOps, MILOp.nonZeroOps,
        MILOp.resampleOps, MILOp.affineOps, MILOp.cropResizeOps, MILOp.recurrentOps,
        MILOp.quantizationOps, MILOp.sliceUpdateOps, MILOp.randomOps, MILOp.controlFlowOps, MILOp.listOps,
    ]

    /// Every registered op by name.
    static let ops: [String: MILOp] = table(areas.flatMap { $0 })

    /// The op registered as `name`, or `nil` when Tessera does not run that op type.
    static func op(named name: String) -> MILOp? { ops[name] }

    /// The names of every registered op.
    static var names: Set<String> { Set(ops.keys) }

    /// `ops` by name.
    ///
    /// - Precondition: No two ops share a name.
    static func table(_ ops: [MILOp]) -> [String: MILOp] {
        var table: [String: MILOp] = [:]
        table.reserveCapacity(ops.count)
        for op in ops {
            precondition(table[op.name] == nil, "[MILOpRegistry] the op type '\(op.name)' is registered twice")
            table[op.name] = op
        }
        return table
    }
}

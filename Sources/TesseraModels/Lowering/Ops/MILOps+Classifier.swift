import TesseraTensor

/// `classify`, the classifier head: passes the probabilities through and adds the index of
/// the best one; its labels are read at load into a ``LoweredClassifier``.
extension MILOp {
    static let classifierOps: [MILOp] = [
        MILOp("classify", batch: .notSeparable, cost: .elementwise) { lowering in
            let probabilities = try lowering.tensor("probabilities")
            lowering.classifier = try LoweredClassifier(lowering.operation, lowering: lowering)
            // The outputs are a label and a dictionary, not the tensors the step returns.
            lowering.checksDeclaredShapes = false
            return { args in
                let p = args[probabilities].asFloat
                try require(p.scalarCount > 0, "no probabilities")
                let flat = p.reshapedIfNeeded(to: [p.scalarCount])
                return [flat.argmax(alongAxis: 0), flat]
            }
        }
    ]
}

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
                let flat = try p.reshaped(checked: [p.scalarCount])
                try require(p.scalarCount > 0, "no probabilities")
                return [try flat.reduced(.argmax, axes: [0], keepDims: false), flat]
            }
        }
    ]
}

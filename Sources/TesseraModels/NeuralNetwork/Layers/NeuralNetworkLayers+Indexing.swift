import TesseraTensor

/// `gather`, `gatherAlongAxis`, `whereBroadcastable`, `topK`, `oneHot` and the
/// triangular / band layers.
extension NeuralNetworkLayerType {
    static let indexingLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 930, cost: .dataMovement) { layer in
            // GatherLayerParams: axis = 1; the indices are the second input.
            try layer.requireCounts(inputs: 2...2)
            let axis = layer.params.int(1) ?? 0
            return { args in
                let x = args[0]
                let a = try x.axis(axis, op: "gather")
                return [x.gathering(atIndices: try MILOp.clampedIndices(args[1], size: x.shape[a]), alongAxis: a)]
            }
        },
        NeuralNetworkLayerType(field: 952, cost: .dataMovement) { layer in
            // GatherAlongAxisLayerParams: axis = 1.
            try layer.requireCounts(inputs: 2...2)
            let axis = layer.params.int(1) ?? 0
            return { args in [try MILOp.gatherAlongAxis(args[0], args[1], axis: axis)] }
        },
        NeuralNetworkLayerType(field: 1330, cost: .elementwise) { layer in
            // The condition is the first input, then the values for true and false.
            try layer.requireCounts(inputs: 3...3)
            return { args in [MLTensor.selecting(args[0].asFloat .!= Float(0), args[1].asFloat, args[2].asFloat)] }
        },
        NeuralNetworkLayerType(field: 1015, cost: .elementwise, valueReads: [1]) { layer in
            // TopKLayerParams: axis = 1, K = 2, useBottomK = 3; a second input, when given, is K
            // (read when the prediction is built).
            try layer.requireCounts(inputs: 1...2, outputs: 2)
            let axis = layer.params.int(1) ?? 0
            let fixedK = layer.params.size(2) ?? 0
            let bottom = layer.params.bool(3)
            let kIsInput = layer.inputCount == 2
            return { args in
                let k = kIsInput ? try RuntimeInts.operand(1).values(args).first ?? 0 : fixedK
                let x = args[0].asFloat
                let a = try x.axis(axis, op: "topK")
                try require(k >= 1 && k <= x.shape[a], "K \(k) for axis \(axis) of \(x.shape)")
                let order = x.argsort(alongAxis: a, descendingOrder: !bottom, count: k)
                return [x.gathering(elementsAt: order, alongAxis: a), order.cast(to: Float.self)]
            }
        },
        NeuralNetworkLayerType(field: 1320, cost: .elementwise) { layer in
            // LowerTriangularLayerParams: k = 1.
            try layer.requireCounts(inputs: 1...1)
            let k = layer.params.int(1) ?? 0
            return { args in [try band(args[0].asFloat, lower: nil, upper: k)] }
        },
        NeuralNetworkLayerType(field: 1325, cost: .elementwise) { layer in
            // UpperTriangularLayerParams: k = 1.
            try layer.requireCounts(inputs: 1...1)
            let k = layer.params.int(1) ?? 0
            return { args in [try band(args[0].asFloat, lower: -k, upper: nil)] }
        },
        NeuralNetworkLayerType(field: 1315, cost: .elementwise) { layer in
            // MatrixBandPartLayerParams: numLower = 1, numUpper = 2 (negative: keep all).
            try layer.requireCounts(inputs: 1...1)
            let (lower, upper) = (layer.params.int(1) ?? 0, layer.params.int(2) ?? 0)
            return { args in [try band(args[0].asFloat, lower: lower < 0 ? nil : lower, upper: upper < 0 ? nil : upper)]
            }
        },
    ]

    /// Keeps the elements `(i, j)` of the last two axes with `j - i ≤ upper` and
    /// `i - j ≤ lower` (`nil`: unbounded), zeroing the rest.
    static func band(_ x: MLTensor, lower: Int?, upper: Int?) throws -> MLTensor {
        try require(x.rank >= 2, "needs a matrix, got \(x.shape)")
        let (rows, columns) = (x.shape[x.rank - 2], x.shape[x.rank - 1])
        try LoweredFunction.requireHostValue(shape: [rows, columns], "the band mask")
        var mask = [Float](repeating: 0, count: rows * columns)
        for i in 0..<rows {
            for j in 0..<columns where (upper.map { j - i <= $0 } ?? true) && (lower.map { i - j <= $0 } ?? true) {
                mask[i * columns + j] = 1
            }
        }
        return x * MLTensor(shape: [rows, columns], scalars: mask, scalarType: Float.self)
    }
}

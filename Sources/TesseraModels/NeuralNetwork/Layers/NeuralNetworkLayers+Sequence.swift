import TesseraTensor

/// `oneHot`, `argSort`, `reverseSeq`, `slidingWindows` and `whereNonZero`: the rank-N
/// layers of spec 5 that reorder, expand or locate elements. Indices they read or produce
/// are Float32 blobs, as every NeuralNetwork blob is.
extension NeuralNetworkLayerType {
    static let sequenceLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 1450, cost: .elementwise, valueReads: [1]) { layer in
            // OneHotLayerParams: oneHotVectorSize = 1, axis = 2 (of the output), onValue = 3,
            // offValue = 4; a second input, when given, is the size. An index outside
            // 0..<size gives a vector of offValue.
            try layer.requireCounts(inputs: 1...2)
            let size = layer.params.size(1) ?? 0
            let axis = layer.params.int(2) ?? 0
            let (on, off) = (layer.params.float(3) ?? 0, layer.params.float(4) ?? 0)
            let sizeIsInput = layer.inputCount == 2
            return { args in
                let depth =
                    sizeIsInput
                    ? try LoweredFunction.computedCount(
                        Double(args[1].asFloat.scalars(of: Float.self).first ?? 0), "oneHotVectorSize")
                    : size
                try require(depth >= 1 && depth <= 1 << 24, "oneHotVectorSize \(depth) must be positive")
                let i = args[0].asFloat.floor()
                let a = try i.axis(axis, op: "oneHot", insertion: true)
                var rangeShape = [Int](repeating: 1, count: i.rank + 1)
                rangeShape[a] = depth
                let range = MLTensor(shape: rangeShape, scalars: (0..<depth).map { Float($0) }, scalarType: Float.self)
                return [MLTensor.selecting(i.expandingShape(at: a) .== range, MLTensor(on), MLTensor(off))]
            }
        },
        NeuralNetworkLayerType(field: 1461, cost: .elementwise) { layer in
            // ArgSortLayerParams: axis = 1, descending = 2; the indices as Float32.
            try layer.requireCounts(inputs: 1...1)
            let axis = layer.params.int(1) ?? 0
            let descending = layer.params.bool(2)
            return { args in
                let x = args[0].asFloat
                let a = try x.axis(axis, op: "argSort")
                return [x.argsort(alongAxis: a, descendingOrder: descending).cast(to: Float.self)]
            }
        },
        NeuralNetworkLayerType(field: 965, cost: .elementwise) { layer in
            // ReverseSeqLayerParams: batchAxis = 1, sequenceAxis = 2. Inputs: data, the
            // sequence lengths (one per batch entry); the first `length` positions along the
            // sequence axis are reversed, the rest kept.
            try layer.requireCounts(inputs: 2...2)
            let (batchAxis, sequenceAxis) = (layer.params.int(1) ?? 0, layer.params.int(2) ?? 0)
            return { args in
                let v = args[0]
                let (s, b) = (try v.axis(sequenceAxis, op: "reverseSeq"), try v.axis(batchAxis, op: "reverseSeq"))
                let length = args[1].asFloat.floor().asInt32
                try require(s != b && length.scalarCount == v.shape[b], "lengths \(length.shape) do not fit \(v.shape)")
                var batchShape = [Int](repeating: 1, count: v.rank)
                batchShape[b] = v.shape[b]
                var timeShape = [Int](repeating: 1, count: v.rank)
                timeShape[s] = v.shape[s]
                let len = length.reshapedIfNeeded(to: batchShape)
                let t = MLTensor(shape: timeShape, scalars: (0..<v.shape[s]).map { Int32($0) }, scalarType: Int32.self)
                let source = MLTensor.selecting(t .< len, len - 1 - t, t)
                return [try MILOp.gatherAlongAxis(v, source.broadcast(to: v.shape), axis: s)]
            }
        },
        NeuralNetworkLayerType(field: 1005, cost: .dataMovement) { layer in
            // SlidingWindowsLayerParams: axis = 1, windowSize = 2, step = 3: `axis` of length L
            // becomes [M, W] with M = (L - W) / step + 1.
            try layer.requireCounts(inputs: 1...1)
            let axis = layer.params.int(1) ?? 0
            let size = layer.params.size(2) ?? 0
            let step = layer.params.size(3) ?? 1
            guard size >= 1, step >= 1 else { throw layer.invalid("windowSize and step must be positive") }
            return { args in
                let v = args[0]
                let a = try v.axis(axis, op: "slidingWindows")
                try require(v.shape[a] >= size, "a window of \(size) does not fit axis \(a) of \(v.shape)")
                let windows = (v.shape[a] - size) / step + 1
                let indices = (0..<windows * size).map { Int32(($0 / size) * step + $0 % size) }
                let table = MLTensor(shape: [windows, size], scalars: indices, scalarType: Int32.self)
                return [v.gathering(atIndices: table, alongAxis: a)]
            }
        },
        NeuralNetworkLayerType(field: 1313, cost: .reduction, valueReads: [0]) { layer in
            // WhereNonZeroLayerParams: no fields; [N, rank] positions of the non-zero elements.
            // N depends on the values, which are read when the prediction is built.
            try layer.requireCounts(inputs: 1...1)
            return { args in [MILOp.nonZeroIndices(args[0]).cast(to: Float.self)] }
        },
    ]
}

import TesseraTensor

/// `innerProduct`, `batchedMatmul` (one input with a weight matrix, or two inputs),
/// `embedding` and `embeddingND`.
extension NeuralNetworkLayerType {
    static let linearAlgebraLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 140, cost: .linear) { layer in try innerProduct(&layer) },
        NeuralNetworkLayerType(field: 1045, cost: .matmul) { layer in try batchedMatMul(&layer) },
        NeuralNetworkLayerType(field: 150, cost: .dataMovement) { layer in try embedding(&layer, nd: false) },
        NeuralNetworkLayerType(field: 1040, cost: .dataMovement) { layer in try embedding(&layer, nd: true) },
    ]

    /// `InnerProductLayerParams`: `inputChannels = 1`, `outputChannels = 2`, `hasBias = 10`,
    /// `weights = 20` (`[C_out, C_in]`), `bias = 21`, `int8DynamicQuantize = 22` (run on the
    /// dequantized weights). Ranks 1–3 multiply the last axis; ranks 4 and 5 flatten
    /// `[C, H, W]` and give `[…, C_out, 1, 1]`.
    static func innerProduct(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let (cIn, cOut) = (p.size(1) ?? 0, p.size(2) ?? 0)
        guard cIn >= 1, cOut >= 1 else { throw layer.invalid("inputChannels and outputChannels must be positive") }
        let w = try layer.weights(20, count: cIn * cOut, what: "weights")
        var transposed = [Float](repeating: 0, count: w.count)
        for o in 0..<cOut { for i in 0..<cIn { transposed[i * cOut + o] = w[o * cIn + i] } }
        let weight = layer.constant(transposed, shape: [cIn, cOut])
        let bias = p.bool(10) ? layer.constant(try layer.weights(21, count: cOut, what: "bias"), shape: [cOut]) : nil
        let name = layer.layer.name
        return { args in
            let x = args[0].asFloat
            let shape = x.shape
            let rows: [Int]
            let restore: [Int]
            switch x.rank {
            case 1: (rows, restore) = ([1, shape[0]], [cOut])
            case 2, 3: (rows, restore) = ([shape.dropLast().reduce(1, *), shape.last!], shape.dropLast() + [cOut])
            case 4: (rows, restore) = ([shape[0], shape.dropFirst().reduce(1, *)], [shape[0], cOut, 1, 1])
            case 5:
                (rows, restore) = (
                    [shape[0] * shape[1], shape.suffix(3).reduce(1, *)], [shape[0], shape[1], cOut, 1, 1]
                )
            default: throw OperandError("\(name): innerProduct takes rank 1 to 5, got \(shape)")
            }
            try require(rows[1] == cIn, "\(name): \(cIn) input channels for an input of shape \(shape)")
            var y = x.reshapedIfNeeded(to: rows).matmul(args[weight])
            if let bias { y = y + args[bias] }
            return [y.reshapedIfNeeded(to: restore)]
        }
    }

    /// `BatchedMatMulLayerParams`: `transposeA = 1`, `transposeB = 2`,
    /// `weightMatrixFirstDimension = 5`, `weightMatrixSecondDimension = 6`, `hasBias = 7`,
    /// `weights = 8` (`[X1, X2]` stored column-major), `bias = 9`.
    static func batchedMatMul(_ layer: inout NeuralNetworkLayerLowering) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...2)
        let p = layer.params
        if layer.inputCount == 2 {
            let (ta, tb) = (p.bool(1), p.bool(2))
            let name = layer.layer.name
            return { args in
                var a = args[0].asFloat
                var b = args[1].asFloat
                try require(
                    a.rank >= 1 && b.rank >= 1,
                    "\(name): batchedMatMul takes inputs of rank 1 or more, got \(a.shape) and \(b.shape)")
                let (aVector, bVector) = (a.rank == 1, b.rank == 1)
                if aVector { a = a.expandingShape(at: 0) }
                if bVector { b = b.expandingShape(at: 1) }
                if ta && !aVector { a = a.transposed(permutation: swappedLast(a.rank)) }
                if tb && !bVector { b = b.transposed(permutation: swappedLast(b.rank)) }
                var y = a.matmul(b)
                if aVector && bVector {
                    y = y.reshapedIfNeeded(to: [1])
                } else if aVector {
                    y = y.squeezingShape(at: y.rank - 2)
                } else if bVector {
                    y = y.squeezingShape(at: y.rank - 1)
                }
                return [y]
            }
        }
        let (x1, x2) = (p.size(5) ?? 0, p.size(6) ?? 0)
        guard x1 >= 1, x2 >= 1 else { throw layer.invalid("the weight matrix dimensions must be positive") }
        let stored = try layer.weights(8, count: x1 * x2, what: "weights")
        // Column-major [X1, X2] is row-major [X2, X1]: transpose once.
        var w = [Float](repeating: 0, count: stored.count)
        for i in 0..<x1 { for j in 0..<x2 { w[i * x2 + j] = stored[j * x1 + i] } }
        let weight = layer.constant(w, shape: [x1, x2])
        let bias = p.bool(7) ? layer.constant(try layer.weights(9, count: x2, what: "bias"), shape: [x2]) : nil
        let name = layer.layer.name
        return { args in
            let x = args[0].asFloat
            try require(x.shape.last == x1, "\(name): the input's last axis must be \(x1), got \(x.shape)")
            var y = x.reshapedIfNeeded(to: [x.scalarCount / x1, x1]).matmul(args[weight])
            if let bias { y = y + args[bias] }
            return [y.reshapedIfNeeded(to: x.shape.dropLast() + [x2])]
        }
    }

    /// A permutation swapping the last two of `rank` axes.
    static func swappedLast(_ rank: Int) -> [Int] {
        Array(0..<(rank - 2)) + [rank - 1, rank - 2]
    }

    /// `EmbeddingLayerParams` (`inputDim = 1`, `outputChannels = 2`, `hasBias = 10`,
    /// `weights = 20`, `bias = 21`; input `[…, 1, 1, 1]`, output `[…, C_out, 1, 1]`) or
    /// `EmbeddingNDLayerParams` (`vocabSize = 1`, `embeddingSize = 2`, `hasBias = 3`; input
    /// `[…, 1]`, output `[…, embeddingSize]`). Weights are `[size, vocabulary]`; indices
    /// outside the vocabulary are clamped to it.
    static func embedding(_ layer: inout NeuralNetworkLayerLowering, nd: Bool) throws -> LoweredCompute {
        try layer.requireCounts(inputs: 1...1)
        let p = layer.params
        let (vocabulary, size) = (p.size(1) ?? 0, p.size(2) ?? 0)
        guard vocabulary >= 1, size >= 1 else {
            throw layer.invalid("the vocabulary and output sizes must be positive")
        }
        let w = try layer.weights(20, count: vocabulary * size, what: "weights")
        var table = [Float](repeating: 0, count: w.count)
        for o in 0..<size { for v in 0..<vocabulary { table[v * size + o] = w[o * vocabulary + v] } }
        let weight = layer.constant(table, shape: [vocabulary, size])
        let hasBias = nd ? p.bool(3) : p.bool(10)
        let bias = hasBias ? layer.constant(try layer.weights(21, count: size, what: "bias"), shape: [size]) : nil
        let name = layer.layer.name
        return { args in
            let x = args[0]
            let trailing = nd ? 1 : 3
            try require(
                x.rank > trailing && x.shape.suffix(trailing).allSatisfy { $0 == 1 },
                "\(name): the input must end in \(trailing) axes of size 1, got \(x.shape)")
            let indices = try MILOp.clampedIndices(x.reshapedIfNeeded(to: [x.scalarCount]), size: vocabulary)
            var y = args[weight].gathering(atIndices: indices, alongAxis: 0)
            if let bias { y = y + args[bias] }
            let leading = Array(x.shape.dropLast(trailing))
            return [y.reshapedIfNeeded(to: nd ? leading + [size] : leading + [size, 1, 1])]
        }
    }
}

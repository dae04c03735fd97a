import TesseraKernels

/// ``GraphOp/matmul``: the batched product of two rank ≥ 2 tensors of one non-`Bool` type;
/// batch dimensions broadcast. `[..., m, k] × [..., k, n]` is `[..., m, n]`.
package enum MatMulRule: OpRule {
    package static var kind: OpKind { .kernel }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        try expectInputs(op, inputs, 2)
        let (a, b) = (inputs[0].shape, inputs[1].shape)
        try OpError.require(a.count >= 2 && b.count >= 2, "[matmul] operands must have rank ≥ 2: \(a) vs \(b)")
        try OpError.require(
            inputs[0].type == inputs[1].type, "[matmul] scalar types differ: \(inputs[0].type) vs \(inputs[1].type)")
        try OpError.require(inputs[0].type != .bool, "[matmul] is not defined for bool tensors")
        try OpError.require(a[a.count - 1] == b[b.count - 2], "[matmul] inner dimensions differ: \(a) vs \(b)")
        guard let batch = StridedLayout.broadcastShape(Array(a.dropLast(2)), Array(b.dropLast(2))) else {
            throw OpError("[matmul] batch dimensions of \(a) and \(b) are not broadcastable")
        }
        return (batch + [a[a.count - 2], b[b.count - 1]], inputs[0].type)
    }

    /// With a fused epilogue (``ConvolutionEpilogueFusion``, ``LinearActivationFusion``; float32
    /// only), the call's residual is a bias of `n` values added to every row or a result-shaped
    /// tensor (then possibly after the call's column bias: a linear layer and the residual
    /// connection after it), its clamp and then its activation applied last:
    /// `activation(clamp((a · b + columnBias) + residual))`.
    package static func run(_ op: GraphOp, _ call: KernelCall) {
        let (a, b) = (call.inputs[0], call.inputs[1])
        let n = call.shape.last ?? 1
        let rows = n == 0 ? 0 : call.shape.reduce(1, *) / n
        // A residual of n values alone is a bias per column; any other is result-shaped.
        let residualIsBias = call.columnBias == nil && call.residual.map { $0.layout.count == n } == true
        let columnBias = call.columnBias?.floats ?? (residualIsBias ? call.residual?.floats : nil)
        let residual = residualIsBias ? nil : call.residual?.floats
        let hasEpilogue = columnBias != nil || residual != nil || !call.clamp.isIdentity
        // On the right-packed kernel both are added in its registers. A result-shaped residual
        // with an activation (not a fusion the planner makes) is added after the product.
        let addsAfter = residual != nil && call.activation != nil
        if runPrepared(
            a, b, output: call.floatOutput, columnBias: columnBias, residual: addsAfter ? nil : residual,
            clamp: addsAfter ? .none : call.clamp, activation: addsAfter ? nil : call.activation)
        {
            if addsAfter {
                call.clamp.finishRows(call.floatOutput, rows: rows, columns: n, adding: residual, addRowStride: n)
                call.activation?.applyRows(call.floatOutput, rows: rows, columns: n)
            }
            return
        }
        GEMMKernels.matmul(
            a: a.pointer, aLayout: a.layout, b: b.pointer, bLayout: b.layout, type: a.type, output: call.output)
        if hasEpilogue {
            if let columnBias, residual != nil {
                ConvolutionClamp.none.finishRows(
                    call.floatOutput, rows: rows, columns: n, adding: columnBias, addRowStride: 0)
            }
            call.clamp.finishRows(
                call.floatOutput, rows: rows, columns: n, adding: residual ?? columnBias,
                addRowStride: residual != nil ? n : 0)
        }
        call.activation?.applyRows(call.floatOutput, rows: rows, columns: n)
    }

    /// A float32 product by a constant matrix — a linear layer's weight, `[k, n]` row-major or
    /// the transposed view of `[n, k]` in memory nobody writes (``PreparedWeights``) — on the
    /// right-packed micro-kernel with the weight packed once, when that kernel is preferred
    /// (``PackedGEMM/rightPackedIsPreferred``) and the left operand's rows are evenly spaced
    /// with unit column stride (every batch dimension folds into its rows); `columnBias` and
    /// `clamp` are applied in the kernel's registers, `activation` to each block of rows as the
    /// kernel writes it, a result-shaped `residual` (row-major) added after the bias in the
    /// registers too. Returns whether it ran; otherwise
    /// ``GEMMKernels/matmul(a:aLayout:b:bLayout:type:output:)`` does the product.
    static func runPrepared(
        _ a: TensorValue, _ b: TensorValue, output: UnsafeMutablePointer<Float>,
        columnBias: UnsafePointer<Float>? = nil, residual: UnsafePointer<Float>? = nil,
        clamp: ConvolutionClamp = .none, activation: LinearActivation? = nil
    ) -> Bool {
        guard let (rows, lda, packed) = preparedOperands(a, b) else { return false }
        let n = b.layout.shape[1]
        // A NaN bound is applied after the kernel, so the activation then comes after it too.
        let late = clamp.hasNaNBound ? activation : nil
        PackedGEMM.product(
            rows: rows, a: a.floats, lda: lda, packed, c: output, ldc: n, columnBias: columnBias, residual: residual,
            residualStride: n, clamp: clamp, activation: late == nil ? activation : nil)
        if clamp.hasNaNBound { clamp.finishRows(output, rows: rows, columns: n, adding: nil, addRowStride: 0) }
        late?.applyRows(output, rows: rows, columns: n)
        return true
    }

    /// The operands of ``runPrepared(_:_:output:columnBias:clamp:activation:)`` when it runs: a
    /// float32 left operand of rank 2 or more whose rows are evenly spaced with unit column
    /// stride (its row count and row stride), and `b`'s packed strips (``preparedRight(_:)``);
    /// `nil` when ``GEMMKernels/matmul(a:aLayout:b:bLayout:type:output:)`` does the product.
    static func preparedOperands(
        _ a: TensorValue, _ b: TensorValue
    ) -> (rows: Int, lda: Int, packed: PackedGEMMRightOperand)? {
        guard a.type == .float32, a.layout.rank >= 2, let k = b.layout.shape.first,
            let (rows, lda) = evenRows(a.layout, depth: k), let packed = preparedRight(b)
        else { return nil }
        return (rows, lda, packed)
    }

    /// Makes a constant right operand's packed strips at load, as ``run(_:_:)`` looks them up
    /// (``preparedRight(_:)``).
    package static func prepare(_ op: GraphOp, operands: [TensorValue?], shapes: [[Int]]) {
        guard operands.count == 2, let b = operands[1] else { return }
        _ = preparedRight(b)
    }

    /// The packed strips of `b` when ``runPrepared(_:_:output:columnBias:clamp:activation:)`` may use
    /// them: a float32 rank-2 operand `[k, n]`, row-major or the transposed view of `[n, k]`,
    /// in memory nobody writes, with the right-packed kernel preferred; `nil` otherwise.
    static func preparedRight(_ b: TensorValue) -> PackedGEMMRightOperand? {
        guard PackedGEMM.rightPackedIsPreferred, b.type == .float32, b.layout.rank == 2 else { return nil }
        let (k, n) = (b.layout.shape[0], b.layout.shape[1])
        let (rowStride, columnStride) = (b.layout.strides[0], b.layout.strides[1])
        let transposed: Bool
        let stride: Int
        if columnStride == 1 && rowStride >= n {
            (transposed, stride) = (false, rowStride)
        } else if rowStride == 1 && columnStride >= k {
            (transposed, stride) = (true, columnStride)
        } else {
            return nil
        }
        guard k > 0, n > 0 else { return nil }
        return PreparedWeights.packedRight(
            b.storage, offset: b.layout.offset, depth: k, columns: n, rowStride: stride, transposed: transposed)
    }

    /// The rows of a `[..., m, k]` layout as one matrix: their count and the distance between
    /// them, when each row is unit-strided and all rows (across the batch) are evenly spaced.
    static func evenRows(_ layout: StridedLayout, depth k: Int) -> (rows: Int, lda: Int)? {
        let rank = layout.rank
        guard layout.shape[rank - 1] == k, k == 1 || layout.strides[rank - 1] == 1 else { return nil }
        var rows = 1
        var lda = 0
        var expected: Int?
        for axis in stride(from: rank - 2, through: 0, by: -1) where layout.shape[axis] != 1 {
            let axisStride = layout.strides[axis]
            if let expected {
                guard axisStride == expected else { return nil }
            } else {
                guard axisStride >= k else { return nil }
                lda = axisStride
            }
            rows *= layout.shape[axis]
            expected = axisStride * layout.shape[axis]
        }
        return (rows, Swift.max(lda, k))
    }
}

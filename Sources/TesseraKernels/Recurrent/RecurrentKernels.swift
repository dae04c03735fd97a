/// The time loop of a recurrent layer (`rnn`, `gru`, `lstm`; one or two directions), over
/// Float32 row-major buffers.
///
/// Per direction: one GEMM projects every time step's input at once (`[T·B, I] × [I, G·H]`,
/// plus the input bias; in blocks of steps past ``projectionBudget``), then each step is one GEMM of the hidden state
/// (`[B, H] × [H, G·H]`, plus the hidden bias; a reset-before GRU does its candidate's
/// `H` columns in a second GEMM of `r ⊙ h`) and one fused pass over the gates
/// (`RecurrentKernels+Gates.swift`). The weights arrive packed
/// (``RecurrentParameters/packWeights(_:)``), so nothing is transposed per run.
///
/// ```swift
/// let p = RecurrentParameters(cell: .lstm(LSTMCell()), direction: .forward,
///                             inputSize: 8, hiddenSize: 16, outputSequence: true)
/// let packed = try p.packWeights([weights])
/// // x [T, B, 8], h0 and c0 [B, 16]; output [T + 2, B, 16]
/// RecurrentKernels.run(p, steps: T, batch: B, x: x, initialH: h0, initialC: c0,
///                      weights: packed, output: out)
/// ```
package enum RecurrentKernels {
    /// The input projection's scratch budget, in floats (4 MiB): a sequence whose projection
    /// is larger is projected in blocks of steps, one GEMM each.
    package static let projectionBudget = 1 << 20

    /// Runs the layer over a sequence.
    ///
    /// - Parameters:
    ///   - parameters: The layer; its ``RecurrentParameters`` doc describes the output rows.
    ///   - steps: `T`, the sequence length (0 gives the initial states back).
    ///   - batch: `B`.
    ///   - x: `[T, B, I]` row-major.
    ///   - initialH: `[B, D·H]` row-major (`[forward | reverse]` for two directions).
    ///   - initialC: The same for an LSTM's cell state; ignored otherwise.
    ///   - weights: ``RecurrentParameters/packedCount`` floats from
    ///     ``RecurrentParameters/packWeights(_:)``.
    ///   - output: ``RecurrentParameters/outputShape(steps:batch:)`` elements, written row-major.
    ///   - maximumProjection: The most floats of input projection held at once: longer
    ///     sequences are projected in blocks of steps (``projectionBudget`` by default).
    /// - Precondition: `steps` and `batch` are not negative; an LSTM has `initialC`.
    package static func run(
        _ parameters: RecurrentParameters, steps: Int, batch: Int, x: UnsafePointer<Float>,
        initialH: UnsafePointer<Float>, initialC: UnsafePointer<Float>?, weights: UnsafePointer<Float>,
        output: UnsafeMutablePointer<Float>, maximumProjection: Int = projectionBudget
    ) {
        kernelPrecondition(steps >= 0 && batch >= 0, "[\(parameters.cell.name)] steps \(steps), batch \(batch)")
        kernelPrecondition(
            parameters.cell.stateCount == 1 || initialC != nil, "[lstm] the initial cell state is missing")
        guard batch > 0 else { return }
        let (t, b, h, width) = (steps, batch, parameters.hiddenSize, parameters.gateWidth)
        let layout = parameters.packedLayout
        let outputWidth = parameters.outputWidth
        let sequenceRows = parameters.outputSequence ? t : 0
        let finalH = output + sequenceRows * b * outputWidth
        let finalC = finalH + b * outputWidth

        let inputSize = parameters.inputSize
        // Steps per input GEMM: all of them unless their projection passes the budget.
        let block = Swift.max(1, Swift.min(t, maximumProjection / Swift.max(b * width, 1)))
        let scratch = Scratch(steps: block, batch: b, hidden: h, width: width)
        defer { withExtendedLifetime(scratch) {} }
        for direction in 0..<parameters.direction.count {
            let w = weights + direction * layout.count
            let backward = parameters.direction == .reverse || direction == 1
            let processingOrder = parameters.direction == .reverse && !parameters.reverseOutputInInputOrder
            let column = direction * h
            for row in 0..<b {
                copy(initialH + row * outputWidth + column, to: scratch.h + row * h, count: h)
                if let initialC, parameters.cell.stateCount == 2 {
                    copy(initialC + row * outputWidth + column, to: scratch.c + row * h, count: h)
                }
            }
            var projected = 0  // the first time index whose projection is in the buffer
            for k in 0..<t {
                if k % block == 0 {
                    let count = Swift.min(block, t - k)
                    projected = backward ? t - k - count : k
                    projectInputs(
                        parameters, steps: count, batch: b, x: x + projected * b * inputSize, weights: w,
                        into: scratch.projection)
                }
                let time = backward ? t - 1 - k : k
                step(
                    parameters, batch: b, projection: scratch.projection + (time - projected) * b * width, weights: w,
                    scratch)
                if parameters.outputSequence {
                    let row = processingOrder ? k : time
                    for item in 0..<b {
                        copy(scratch.h + item * h, to: output + (row * b + item) * outputWidth + column, count: h)
                    }
                }
            }
            for item in 0..<b {
                copy(scratch.h + item * h, to: finalH + item * outputWidth + column, count: h)
                if parameters.cell.stateCount == 2 {
                    copy(scratch.c + item * h, to: finalC + item * outputWidth + column, count: h)
                }
            }
        }
    }

    /// The per-run buffers: the input projection of every step, the hidden projection, the
    /// states and a reset-before GRU's `r ⊙ h`.
    final class Scratch {
        let buffers: [AlignedBuffer]
        let projection: UnsafeMutablePointer<Float>
        let hiddenProjection: UnsafeMutablePointer<Float>
        let h: UnsafeMutablePointer<Float>
        let c: UnsafeMutablePointer<Float>
        let resetHidden: UnsafeMutablePointer<Float>

        init(steps: Int, batch: Int, hidden: Int, width: Int) {
            let counts = [steps * batch * width, batch * width, batch * hidden, batch * hidden, batch * hidden]
            buffers = counts.map { GEMMKernels.temporary(Float.self, count: Swift.max($0, 1)) }
            projection = buffers[0].typedPointer(Float.self)
            hiddenProjection = buffers[1].typedPointer(Float.self)
            h = buffers[2].typedPointer(Float.self)
            c = buffers[3].typedPointer(Float.self)
            resetHidden = buffers[4].typedPointer(Float.self)
        }
    }

    /// `projection[steps·B, G·H] = x · W_ih + b_ih` for `steps` consecutive steps, one GEMM.
    static func projectInputs(
        _ parameters: RecurrentParameters, steps: Int, batch: Int, x: UnsafePointer<Float>,
        weights: UnsafePointer<Float>, into projection: UnsafeMutablePointer<Float>
    ) {
        let rows = steps * batch
        let width = parameters.gateWidth
        fillRows(projection, rows: rows, with: weights + parameters.packedLayout.inputBias, width: width)
        GEMMKernels.sgemm(
            transposeA: false, transposeB: false, m: rows, n: width, k: parameters.inputSize, alpha: 1, a: x,
            lda: Swift.max(parameters.inputSize, 1), b: weights, ldb: width, beta: 1, c: projection, ldc: width)
    }

    /// One time step: the hidden projection's GEMM, then the fused gates of every batch row.
    static func step(
        _ parameters: RecurrentParameters, batch: Int, projection: UnsafePointer<Float>,
        weights: UnsafePointer<Float>, _ scratch: Scratch
    ) {
        let (h, width) = (parameters.hiddenSize, parameters.gateWidth)
        let layout = parameters.packedLayout
        let recurrent = weights + layout.recurrent
        let hidden = scratch.hiddenProjection
        fillRows(hidden, rows: batch, with: weights + layout.hiddenBias, width: width)
        // A reset-before GRU multiplies R_o by r ⊙ h, known only after the gates: its first
        // product stops at the r and z columns.
        let resetBefore: Bool
        if case .gru(_, _, let resetAfter) = parameters.cell { resetBefore = !resetAfter } else { resetBefore = false }
        GEMMKernels.sgemm(
            transposeA: false, transposeB: false, m: batch, n: resetBefore ? 2 * h : width, k: h, alpha: 1,
            a: scratch.h, lda: h, b: recurrent, ldb: width, beta: 1, c: hidden, ldc: width)
        let rowCost = ParallelCost.perItem(nanoseconds: Double(width) * 6)
        switch parameters.cell {
        case .rnn(let activation):
            parallelFor(count: batch, cost: rowCost) { rows in
                for row in rows {
                    rnnRow(
                        activation, a: projection + row * width, r: hidden + row * width, h: scratch.h + row * h,
                        hidden: h)
                }
            }
        case .lstm(let cell):
            let peephole = cell.hasPeephole ? UnsafePointer(weights + layout.peephole) : nil
            parallelFor(count: batch, cost: rowCost) { rows in
                for row in rows {
                    lstmRow(
                        cell, a: projection + row * width, r: hidden + row * width, peephole: peephole,
                        h: scratch.h + row * h, c: scratch.c + row * h, hidden: h)
                }
            }
        case .gru(let gate, let candidate, true):
            parallelFor(count: batch, cost: rowCost) { rows in
                for row in rows {
                    gruResetAfterRow(
                        gate: gate, candidate: candidate, a: projection + row * width, r: hidden + row * width,
                        h: scratch.h + row * h, hidden: h)
                }
            }
        case .gru(let gate, let candidate, false):
            parallelFor(count: batch, cost: rowCost) { rows in
                for row in rows {
                    gruGatesRow(
                        gate: gate, a: projection + row * width, r: hidden + row * width, h: scratch.h + row * h,
                        resetHidden: scratch.resetHidden + row * h, hidden: h)
                }
            }
            GEMMKernels.sgemm(
                transposeA: false, transposeB: false, m: batch, n: h, k: h, alpha: 1, a: scratch.resetHidden, lda: h,
                b: recurrent + 2 * h, ldb: width, beta: 1, c: hidden + 2 * h, ldc: width)
            parallelFor(count: batch, cost: rowCost) { rows in
                for row in rows {
                    gruCandidateRow(
                        candidate: candidate, a: projection + row * width, r: hidden + row * width,
                        h: scratch.h + row * h, hidden: h)
                }
            }
        }
    }

    /// Every row of `destination` (`rows × width`) set to `row`.
    static func fillRows(
        _ destination: UnsafeMutablePointer<Float>, rows: Int, with row: UnsafePointer<Float>, width: Int
    ) {
        for index in 0..<rows { copy(row, to: destination + index * width, count: width) }
    }

    @inline(__always)
    static func copy(_ source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, count: Int) {
        destination.update(from: source, count: count)
    }
}

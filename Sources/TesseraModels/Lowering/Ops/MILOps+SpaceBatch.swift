import TesseraTensor

/// `space_to_batch` and `batch_to_space` (iOS 15+): TensorFlow's `SpaceToBatchND` and
/// `BatchToSpaceND` on `[N, C, H, W]` with a block `[bh, bw]`, as views and one copy each.
///
/// `space_to_batch` pads H and W, splits them into blocks and moves the block offsets in
/// front of the batch: `out[(i·bw + j)·N + n, c, h, w] = padded[n, c, h·bh + i, w·bw + j]`.
/// `batch_to_space` is its inverse, cropping afterwards.
extension MILOp {
    static let spaceBatchOps: [MILOp] = [
        // Both move elements between the batch axis and the spatial ones: batches run as a loop.
        MILOp("space_to_batch", batch: .notSeparable, cost: .dataMovement) { lowering in
            let x = try lowering.tensor("x")
            let block = try lowering.spaceBatchBlock()
            let paddings = try lowering.spaceBatchPairs("paddings")
            return { args in [try spaceToBatch(args[x], block: block, paddings: paddings)] }
        },
        MILOp("batch_to_space", batch: .notSeparable, cost: .dataMovement) { lowering in
            let x = try lowering.tensor("x")
            let block = try lowering.spaceBatchBlock()
            let crops = try lowering.spaceBatchPairs("crops")
            return { args in [try batchToSpace(args[x], block: block, crops: crops)] }
        },
    ]

    /// `x` `[N, C, H, W]` padded by `paddings` (`[top, bottom, left, right]`) and split into
    /// `[bh·bw·N, C, H'/bh, W'/bw]`.
    static func spaceToBatch(_ x: MLTensor, block: [Int], paddings: [Int]) throws -> MLTensor {
        try require(x.rank == 4, "space_to_batch needs a rank-4 [N, C, H, W] input, got \(x.shape)")
        let (bh, bw) = (block[0], block[1])
        let (n, c) = (x.shape[0], x.shape[1])
        let (h, w) = (x.shape[2] + paddings[0] + paddings[1], x.shape[3] + paddings[2] + paddings[3])
        try require(
            h % bh == 0 && w % bw == 0,
            "the padded spatial size [\(h), \(w)] of \(x.shape) does not split into blocks \(block)")
        let padded =
            paddings.allSatisfy { $0 == 0 }
            ? x
            : x.padded(forSizes: [(0, 0), (0, 0), (paddings[0], paddings[1]), (paddings[2], paddings[3])], with: 0)
        let blocks = padded.reshaped(to: [n, c, h / bh, bh, w / bw, bw]).transposed(permutation: [3, 5, 0, 1, 2, 4])
        return blocks.reshaped(to: [bh * bw * n, c, h / bh, w / bw])
    }

    /// `x` `[bh·bw·N, C, H, W]` joined into `[N, C, H·bh, W·bw]` and cropped by `crops`
    /// (`[top, bottom, left, right]`).
    static func batchToSpace(_ x: MLTensor, block: [Int], crops: [Int]) throws -> MLTensor {
        try require(x.rank == 4, "batch_to_space needs a rank-4 [N, C, H, W] input, got \(x.shape)")
        let (bh, bw) = (block[0], block[1])
        let (c, h, w) = (x.shape[1], x.shape[2], x.shape[3])
        try require(
            x.shape[0] % (bh * bw) == 0, "the batch \(x.shape[0]) of \(x.shape) is not a multiple of the block \(block)"
        )
        let n = x.shape[0] / (bh * bw)
        let (height, width) = (h * bh - crops[0] - crops[1], w * bw - crops[2] - crops[3])
        try require(height >= 0 && width >= 0, "crops \(crops) exceed the joined size [\(h * bh), \(w * bw)]")
        let joined = x.reshaped(to: [bh, bw, n, c, h, w]).transposed(permutation: [2, 3, 4, 0, 5, 1])
            .reshaped(to: [n, c, h * bh, w * bw])
        return joined.sliced(starts: [0, 0, crops[0], crops[2]], steps: [1, 1, 1, 1], counts: [n, c, height, width])
    }
}

extension OperationLowering {
    /// `block_shape`: two positive integers.
    func spaceBatchBlock() throws -> [Int] {
        let block = try required(ints("block_shape"), "block_shape")
        guard block.count == 2, block.allSatisfy({ $0 >= 1 }) else {
            throw invalid("block_shape must be two positive integers, got \(block)")
        }
        return block
    }

    /// `paddings` or `crops`: a `[2, 2]` constant of non-negative integers, flattened.
    func spaceBatchPairs(_ name: String) throws -> [Int] {
        let pairs = try required(ints(name), name)
        guard pairs.count == 4, pairs.allSatisfy({ $0 >= 0 }) else {
            throw invalid("\(name) must be [[top, bottom], [left, right]] of non-negative integers, got \(pairs)")
        }
        return pairs
    }
}

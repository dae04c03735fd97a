import Foundation
import TesseraKernels

/// Deliberately naive references for the reduction, softmax and scan kernels: every element
/// is visited through ``NaiveLayout/indices(of:)`` and computed in `Double`.
package enum NaiveReduction {
    /// The keep-rank result of reducing `storage` (read through `layout`) over `axes`.
    ///
    /// Sums and products are exact-ish in `Double`; callers wrap integer results to their
    /// type. `argmax`/`argmin` give the first index of the extreme, the first NaN winning.
    package static func reduce(_ op: ReductionOp, _ storage: [Double], _ layout: StridedLayout, axes: [Int]) -> [Double]
    {
        var outShape = layout.shape
        for axis in axes { outShape[axis] = 1 }
        var groups = [[Double]](repeating: [], count: outShape.reduce(1, *))
        // Visiting input indices in row-major order visits each group's reduced indices in
        // row-major order of the reduced axes too.
        for index in NaiveLayout.indices(of: layout.shape) {
            var outIndex = index
            for axis in axes { outIndex[axis] = 0 }
            groups[NaiveLayout.linear(outIndex, in: outShape)].append(
                storage[NaiveLayout.position(of: index, in: layout)])
        }
        return groups.map { reduceValues(op, $0) }
    }

    /// `op` applied to one group of values in order (`argmax`/`argmin` give the position).
    package static func reduceValues(_ op: ReductionOp, _ values: [Double]) -> Double {
        switch op {
        case .sum: return values.reduce(0, +)
        case .mean: return values.reduce(0, +) / Double(values.count)
        case .product: return values.reduce(1, *)
        case .max:
            if values.contains(where: \.isNaN) { return .nan }
            return values.max()!
        case .min:
            if values.contains(where: \.isNaN) { return .nan }
            return values.min()!
        case .all: return values.allSatisfy { $0 != 0 } ? 1 : 0
        case .any: return values.contains { $0 != 0 } ? 1 : 0
        case .argmax, .argmin:
            if let nan = values.firstIndex(where: \.isNaN) { return Double(nan) }
            let best = op == .argmax ? values.max()! : values.min()!
            return Double(values.firstIndex(of: best)!)
        }
    }

    /// Softmax (or log-softmax) along `axis`, row-major output of `layout.shape`.
    package static func softmax(_ storage: [Double], _ layout: StridedLayout, axis: Int, log: Bool) -> [Double] {
        var result = [Double](repeating: 0, count: layout.count)
        for index in NaiveLayout.indices(of: layout.shape) where index[axis] == 0 {
            var line: [Double] = []
            var positions: [Int] = []
            for k in 0..<layout.shape[axis] {
                var i = index
                i[axis] = k
                line.append(storage[NaiveLayout.position(of: i, in: layout)])
                positions.append(NaiveLayout.linear(i, in: layout.shape))
            }
            let m = line.max()!
            let m2 = line.contains(where: \.isNaN) ? Double.nan : m
            let sum = line.reduce(0) { $0 + Foundation.exp($1 - m2) }
            for k in 0..<line.count {
                result[positions[k]] =
                    log ? line[k] - m2 - Foundation.log(sum) : Foundation.exp(line[k] - m2) / sum
            }
        }
        return result
    }

    /// Cumulative sum or product along `axis`, row-major output of `layout.shape`.
    package static func cumulative(
        _ storage: [Double], _ layout: StridedLayout, axis: Int, product: Bool, exclusive: Bool, reverse: Bool
    ) -> [Double] {
        var result = [Double](repeating: 0, count: layout.count)
        guard layout.shape[axis] > 0 else { return result }
        for index in NaiveLayout.indices(of: layout.shape) where index[axis] == 0 {
            var order = Array(0..<layout.shape[axis])
            if reverse { order.reverse() }
            var running: Double = product ? 1 : 0
            for k in order {
                var i = index
                i[axis] = k
                let x = storage[NaiveLayout.position(of: i, in: layout)]
                let next = product ? running * x : running + x
                result[NaiveLayout.linear(i, in: layout.shape)] = exclusive ? running : next
                running = next
            }
        }
        return result
    }
}

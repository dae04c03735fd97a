/// Deliberately naive references for the copy kernels: every output element is computed from
/// its multi-index with the textbook formula, on row-major arrays. Inputs are the logical
/// elements (use ``StridedStorage/logicalElements`` for a strided operand).
package enum NaiveCopy {
    /// `numpy.concatenate(parts, axis)`.
    package static func concatenate<T>(_ parts: [(elements: [T], shape: [Int])], axis: Int) -> (
        elements: [T], shape: [Int]
    ) {
        var outShape = parts[0].shape
        outShape[axis] = parts.map { $0.shape[axis] }.reduce(0, +)
        var result: [T] = []
        for index in NaiveLayout.indices(of: outShape) {
            var position = index[axis]
            for part in parts {
                if position < part.shape[axis] {
                    var local = index
                    local[axis] = position
                    result.append(part.elements[NaiveLayout.linear(local, in: part.shape)])
                    break
                }
                position -= part.shape[axis]
            }
        }
        return (result, outShape)
    }

    /// `numpy.split` into pieces of the given sizes along `axis`.
    package static func split<T>(_ elements: [T], shape: [Int], axis: Int, sizes: [Int]) -> [[T]] {
        var start = 0
        var pieces: [[T]] = []
        for size in sizes {
            var pieceShape = shape
            pieceShape[axis] = size
            pieces.append(
                NaiveLayout.indices(of: pieceShape).map { index in
                    var source = index
                    source[axis] += start
                    return elements[NaiveLayout.linear(source, in: shape)]
                })
            start += size
        }
        return pieces
    }

    /// The pad modes, with the constant as a value.
    package enum Mode<T> {
        case constant(T)
        case reflect, symmetric, edge
    }

    /// `numpy.pad(x, padding, mode)`.
    package static func pad<T>(_ elements: [T], shape: [Int], padding: [(Int, Int)], mode: Mode<T>) -> [T] {
        let outShape = (0..<shape.count).map { shape[$0] + padding[$0].0 + padding[$0].1 }
        return NaiveLayout.indices(of: outShape).map { index in
            var source: [Int] = []
            for axis in 0..<shape.count {
                let n = shape[axis]
                let i = index[axis] - padding[axis].0
                if i >= 0 && i < n {
                    source.append(i)
                    continue
                }
                switch mode {
                case .constant(let value): return value
                case .reflect: source.append(i < 0 ? -i : 2 * (n - 1) - i)
                case .symmetric: source.append(i < 0 ? -i - 1 : 2 * n - 1 - i)
                case .edge: source.append(i < 0 ? 0 : n - 1)
                }
            }
            return elements[NaiveLayout.linear(source, in: shape)]
        }
    }

    /// `numpy.take(x, indices, axis)`.
    package static func take<T>(_ elements: [T], shape: [Int], axis: Int, indices: [Int32], indicesShape: [Int]) -> [T]
    {
        let outShape = Array(shape[..<axis]) + indicesShape + Array(shape[(axis + 1)...])
        return NaiveLayout.indices(of: outShape).map { index in
            let j = NaiveLayout.linear(Array(index[axis..<(axis + indicesShape.count)]), in: indicesShape)
            var i = Int(indices[j])
            if i < 0 { i += shape[axis] }
            let source = Array(index[..<axis]) + [i] + Array(index[(axis + indicesShape.count)...])
            return elements[NaiveLayout.linear(source, in: shape)]
        }
    }

    /// `torch.gather(x, axis, indices)`.
    package static func gatherElements<T>(
        _ elements: [T], shape: [Int], axis: Int, indices: [Int32], indicesShape: [Int]
    ) -> [T] {
        NaiveLayout.indices(of: indicesShape).map { index in
            var source = index
            var i = Int(indices[NaiveLayout.linear(index, in: indicesShape)])
            if i < 0 { i += shape[axis] }
            source[axis] = i
            return elements[NaiveLayout.linear(source, in: shape)]
        }
    }

    /// `torch.scatter(data, axis, indices, updates)` (or `scatter_add` with `combine: +`),
    /// applying updates in row-major order of the indices.
    package static func scatterElements<T>(
        _ data: [T], shape: [Int], axis: Int, indices: [Int32], indicesShape: [Int], updates: [T],
        combine: (T, T) -> T = { _, new in new }
    ) -> [T] {
        var result = data
        for index in NaiveLayout.indices(of: indicesShape) {
            let k = NaiveLayout.linear(index, in: indicesShape)
            var target = index
            var i = Int(indices[k])
            if i < 0 { i += shape[axis] }
            target[axis] = i
            let position = NaiveLayout.linear(target, in: shape)
            result[position] = combine(result[position], updates[k])
        }
        return result
    }

    /// `numpy.tile(x, multiples)` with one multiple per axis.
    package static func tile<T>(_ elements: [T], shape: [Int], multiples: [Int]) -> [T] {
        let outShape = zip(shape, multiples).map { $0 * $1 }
        return NaiveLayout.indices(of: outShape).map { index in
            elements[NaiveLayout.linear((0..<shape.count).map { index[$0] % shape[$0] }, in: shape)]
        }
    }
}

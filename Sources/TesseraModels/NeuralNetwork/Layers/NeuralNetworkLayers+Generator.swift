import TesseraKernels
import TesseraTensor

/// Layers that make values: `loadConstant`, `loadConstantND`, `fillStatic`, `fillLike`,
/// `fillDynamic`, `rangeStatic` and `rangeDynamic`.
extension NeuralNetworkLayerType {
    static let generatorLayers: [NeuralNetworkLayerType] = [
        NeuralNetworkLayerType(field: 290, cost: .loadTime) { layer in
            // LoadConstantLayerParams: shape = 1 ([C, H, W]), data = 2; a rank-5 blob.
            try layer.requireCounts(inputs: 0...0)
            let shape = try layer.ints(1)
            guard shape.count == 3, shape.allSatisfy({ $0 >= 1 }) else {
                throw layer.invalid("shape must be [C, H, W], got \(shape)")
            }
            let isRank5 = layer.isRank5
            let c = layer.constant(
                try layer.weights(2, shape: shape, what: "data"), shape: isRank5 ? [1, 1] + shape : shape)
            return { args in [args[c]] }
        },
        NeuralNetworkLayerType(field: 1070, cost: .loadTime) { layer in
            // LoadConstantNDLayerParams: shape = 1, data = 2.
            try layer.requireCounts(inputs: 0...0)
            let shape = try layer.ints(1)
            guard shape.allSatisfy({ $0 >= 1 }) else { throw layer.invalid("shape must be positive, got \(shape)") }
            let c = layer.constant(try layer.weights(2, shape: shape, what: "data"), shape: shape)
            return { args in [args[c]] }
        },
        NeuralNetworkLayerType(field: 1085, cost: .elementwise) { layer in
            // FillStaticLayerParams: value = 1, targetShape = 2.
            try layer.requireCounts(inputs: 0...0)
            let value = layer.params.float(1) ?? 0
            let shape = try layer.ints(2)
            guard shape.allSatisfy({ $0 >= 1 }),
                (shape.checkedElementCount ?? .max) <= LoweredFunction.maximumElementCount
            else {
                throw layer.invalid("targetShape must be positive, got \(shape)")
            }
            return { _ in [MLTensor(repeating: value, shape: shape)] }
        },
        NeuralNetworkLayerType(field: 1080, cost: .elementwise) { layer in
            // FillLikeLayerParams: value = 1.
            try layer.requireCounts(inputs: 1...1)
            let value = layer.params.float(1) ?? 0
            return { args in [MLTensor(repeating: value, shape: args[0].shape)] }
        },
        NeuralNetworkLayerType(field: 1090, cost: .elementwise, valueReads: [0]) { layer in
            // FillDynamicLayerParams: value = 1; the shape is the input.
            try layer.requireCounts(inputs: 1...1)
            let value = layer.params.float(1) ?? 0
            return { args in
                let shape = try RuntimeInts.operand(0).values(args)
                try require(shape.allSatisfy { $0 >= 0 }, "fillDynamic shape \(shape) is negative")
                return [MLTensor(repeating: value, shape: shape)]
            }
        },
        NeuralNetworkLayerType(field: 635, cost: .elementwise) { layer in
            // RangeStaticLayerParams: endValue = 1, startValue = 2, stepSizeValue = 3.
            try layer.requireCounts(inputs: 0...0)
            let p = layer.params
            let values = try range(start: p.float(2) ?? 0, end: p.float(1) ?? 0, step: p.float(3) ?? 0, layer)
            let c = layer.constant(values, shape: [values.count])
            return { args in [args[c]] }
        },
        NeuralNetworkLayerType(field: 640, cost: .elementwise, valueReads: [0, 1, 2]) { layer in
            // RangeDynamicLayerParams: startValue = 2, stepSizeValue = 3; the end (and start,
            // step) are inputs.
            try layer.requireCounts(inputs: 1...3)
            let (start, step) = (layer.params.float(2) ?? 0, layer.params.float(3) ?? 0)
            let count = layer.inputCount
            return { args in
                func scalar(_ index: Int) -> Float { args[index].asFloat.scalars(of: Float.self).first ?? 0 }
                let end = scalar(0)
                let first = count >= 2 ? scalar(1) : start
                let stride = count >= 3 ? scalar(2) : step
                let n = try LoweredFunction.rangeCount(start: Double(first), end: Double(end), step: Double(stride))
                return [
                    MLTensor(shape: [n], scalars: (0..<n).map { first + Float($0) * stride }, scalarType: Float.self)
                ]
            }
        },
    ]

    /// `start, start + step, …` below `end` (above it for a negative step).
    static func range(start: Float, end: Float, step: Float, _ layer: NeuralNetworkLayerLowering) throws -> [Float] {
        let count: Int
        do {
            count = try LoweredFunction.rangeCount(start: Double(start), end: Double(end), step: Double(step))
        } catch let error as OperandError {
            throw layer.invalid(error.message)
        }
        guard (end - start) / step >= 0 else {
            throw layer.invalid("range [\(start), \(end)) by \(step) steps away from its end")
        }
        return (0..<count).map { start + Float($0) * step }
    }
}

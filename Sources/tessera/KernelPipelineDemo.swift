import Tessera
import TesseraKernels

/// The embedded demo: a tiny image classifier run step by step on the kernel layer.
///
/// The image and the weights are made from a fixed seed, so every run prints the same
/// numbers. It runs after the digit classifier (`DigitsDemo`) and shows, step by step, the
/// kernels a model's prediction goes through.
enum KernelPipelineDemo {
    static func run() {
        print(
            "Tessera demo: MLTensor pre-processing → a small CNN on the kernels → MLTensor post-processing (OpenBLAS \(KernelThreads.blasSummary); \(KernelThreads.coreBudget) Tessera threads)\n"
        )
        var rng = DemoRandom(seed: 2026)
        let start = DispatchTime.now().uptimeNanoseconds

        // 1. A 64×64 RGB image as bytes, like a decoded PNG.
        let height = 64
        let width = 64
        let pixels: [UInt8] = (0..<(3 * height * width)).map { i in
            let x = i % width
            let y = (i / width) % height
            return UInt8(truncatingIfNeeded: (x * 3 + y * 2 + (i / (width * height)) * 40) ^ Int(rng.next() % 16))
        }
        step("image", "uint8 [1, 3, \(height), \(width)]", "synthetic gradient with noise")

        // 2. Pre-processing with MLTensor: uint8 → float, scale, per-channel normalize. Lazy:
        //    nothing runs until the result is read, and then the chain runs as one fused pass.
        let shape = [1, 3, height, width]
        let image = MLTensor(shape: shape, scalars: pixels, scalarType: UInt8.self)
        let mean = MLTensor(shape: [1, 3, 1, 1], scalars: [0.485, 0.456, 0.406] as [Float])
        let std = MLTensor(shape: [1, 3, 1, 1], scalars: [0.229, 0.224, 0.225] as [Float])
        let input = (image.cast(to: Float.self) / 255 - mean) / std
        let preStats = MLTensor.materialize([input])
        let normalized = input.scalars(of: Float.self)
        step(
            "normalize (MLTensor)", "float32 \(input.shape)",
            "\(preStats.kernels) fused kernel for \(preStats.fusedNodes) ops; mean \(format(average(normalized)))")

        // 3. Conv 3×3, 3→16, stride 2, pad 1, then ReLU.
        let filters = 16
        let weights = (0..<(filters * 3 * 9)).map { _ in rng.uniform() * 0.4 - 0.2 }
        let bias = (0..<filters).map { _ in rng.uniform() * 0.1 }
        let conv = Conv2DParameters(strides: (2, 2), padding: (1, 1, 1, 1))
        let convShape = conv.outputShape(inputShape: shape, weightShape: [filters, 3, 3, 3])
        var features = [Float](repeating: 0, count: convShape.reduce(1, *))
        normalized.withUnsafeBufferPointer { x in
            weights.withUnsafeBufferPointer { w in
                bias.withUnsafeBufferPointer { b in
                    features.withUnsafeMutableBufferPointer { y in
                        ConvolutionKernels.conv2d(
                            input: x.baseAddress!, inputShape: shape, weights: w.baseAddress!,
                            weightShape: [filters, 3, 3, 3], bias: b.baseAddress!, output: y.baseAddress!,
                            parameters: conv)
                    }
                }
            }
        }
        var activated = [Float](repeating: 0, count: features.count)
        let zero: [Float] = [0]
        features.withUnsafeBytes { f in
            zero.withUnsafeBytes { z in
                activated.withUnsafeMutableBytes { out in
                    ElementwiseKernels.binary(
                        .max, lhs: f.baseAddress!, lhsLayout: StridedLayout(contiguous: convShape), rhs: z.baseAddress!,
                        rhsLayout: StridedLayout(contiguous: []), type: .float32, output: out.baseAddress!)
                }
            }
        }
        let active = activated.filter { $0 > 0 }.count
        step(
            "conv2d + relu", "float32 \(convShape)",
            "im2col + sgemm; \(active) of \(activated.count) activations positive")

        // 4. Global average pool → [1, 16].
        var pooled = [Float](repeating: 0, count: filters)
        activated.withUnsafeBufferPointer { x in
            pooled.withUnsafeMutableBufferPointer { y in
                PoolingKernels.globalAveragePool2d(input: x.baseAddress!, inputShape: convShape, output: y.baseAddress!)
            }
        }
        step("global average pool", "float32 [1, \(filters)]", "mean per channel")

        // 5. Classifier: [1, 16] × [16, 10] → logits.
        let classes = ["cat", "dog", "bird", "fish", "horse", "frog", "ship", "truck", "plane", "car"]
        let classifier = (0..<(filters * classes.count)).map { _ in rng.uniform() * 2 - 1 }
        var logits = [Float](repeating: 0, count: classes.count)
        pooled.withUnsafeBytes { x in
            classifier.withUnsafeBytes { w in
                logits.withUnsafeMutableBytes { y in
                    GEMMKernels.matmul(
                        a: x.baseAddress!, aLayout: StridedLayout(contiguous: [1, filters]), b: w.baseAddress!,
                        bLayout: StridedLayout(contiguous: [filters, classes.count]), type: .float32,
                        output: y.baseAddress!)
                }
            }
        }
        step("matmul", "float32 [1, \(classes.count)]", "logits")

        // 6. Post-processing with MLTensor: softmax and argmax over the classes in one plan.
        let logitsTensor = MLTensor(shape: [1, classes.count], scalars: logits)
        let probabilitiesTensor = logitsTensor.softmax(alongAxis: -1)
        let bestTensor = logitsTensor.argmax(alongAxis: -1)
        let postStats = MLTensor.materialize([probabilitiesTensor, bestTensor])
        let probabilities = probabilitiesTensor.scalars(of: Float.self)
        let best = bestTensor.scalars(of: Int32.self)
        step(
            "softmax + argmax (MLTensor)", "float32 [1, \(classes.count)], int32 [1]",
            "\(postStats.kernels) kernels; probabilities sum to \(format(probabilities.reduce(0, +)))")

        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        let top = Int(best[0])
        print("\nprediction: \(classes[top]) (p = \(format(probabilities[top]))), from untrained weights")
        let ranked = zip(classes, probabilities).sorted { $0.1 > $1.1 }.prefix(3)
        print("top 3: " + ranked.map { "\($0.0) \(format($0.1))" }.joined(separator: ", "))
        print(String(format: "total %.2f ms", elapsed))
    }

    private static func step(_ name: String, _ result: String, _ note: String) {
        print(
            "  \(name.padding(toLength: 28, withPad: " ", startingAt: 0)) → \(result.padding(toLength: 34, withPad: " ", startingAt: 0)) \(note)"
        )
    }

    private static func average(_ values: [Float]) -> Float { values.reduce(0, +) / Float(values.count) }

    private static func format(_ value: Float) -> String { String(format: "%.4f", value) }
}

/// A fixed-seed generator (SplitMix64) so the demo prints the same numbers on every run.
struct DemoRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A float in [0, 1).
    mutating func uniform() -> Float { Float(next() >> 40) / Float(1 << 24) }
}

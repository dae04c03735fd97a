import Foundation
import TesseraGraph
import TesseraKernels
import Testing
import _TesseraTestSupport

@testable import TesseraTensor

let extensionCases: [FixtureCase] = [
    FixtureCase("sigmoid", "x") { $0[0].sigmoid() },
    FixtureCase("relu", "x") { $0[0].relu() },
    FixtureCase("silu", "x") { $0[0].silu() },
    FixtureCase("gelu", "x") { $0[0].gelu() },
    FixtureCase("gelu_tanh", "x") { $0[0].gelu(approximation: .tanh) },
    FixtureCase("erf", "x") { $0[0].erf() },
    FixtureCase("log_softmax", "x") { $0[0].logSoftmax() },
    FixtureCase("log_softmax_ax0", "x") { $0[0].logSoftmax(alongAxis: 0) },
    FixtureCase("layer_norm", "x") { $0[0].layerNorm() },
    FixtureCase("layer_norm_2axes", "a") { $0[0].layerNorm(alongAxes: [-2, -1], epsilon: 1e-5) },
    FixtureCase("rms_norm", "x") { $0[0].rmsNorm() },
    FixtureCase("l2_normalized", "x") { $0[0].l2Normalized() },
    FixtureCase("l2_normalized_ax0", "x") { $0[0].l2Normalized(alongAxes: [0]) },
    FixtureCase("cosine", "x", "y") { $0[0].cosineSimilarity($0[1]) },
    FixtureCase("logsumexp", "x") { $0[0].logSumExp(alongAxes: [-1]) },
    FixtureCase("logsumexp_all", "x") { $0[0].logSumExp() },
    FixtureCase("variance_ax0", "x") { $0[0].variance(alongAxes: 0) },
    FixtureCase("variance_all", "x") { $0[0].variance() },
    FixtureCase("std_ax1_keep", "x") { $0[0].standardDeviation(alongAxes: [1], keepRank: true) },
    FixtureCase("std_all", "x") { $0[0].standardDeviation() },
    FixtureCase("sdpa", "q", "k", "v") { MLTensor.scaledDotProductAttention(query: $0[0], key: $0[1], value: $0[2]) },
    FixtureCase("sdpa_bool", "q", "k", "v", "bool_mask") {
        MLTensor.scaledDotProductAttention(query: $0[0], key: $0[1], value: $0[2], mask: $0[3])
    },
    FixtureCase("sdpa_float", "q", "k", "v", "float_mask") {
        MLTensor.scaledDotProductAttention(query: $0[0], key: $0[1], value: $0[2], mask: $0[3])
    },
    FixtureCase("sdpa_causal", "q", "k", "v") {
        MLTensor.scaledDotProductAttention(
            query: $0[0], key: $0[1], value: $0[2], mask: MLTensor.causalMask(queryCount: 5, keyCount: 7))
    },
    FixtureCase("sdpa_scale", "q", "k", "v") {
        MLTensor.scaledDotProductAttention(query: $0[0], key: $0[1], value: $0[2], scale: 0.5)
    },
    FixtureCase("causal_mask") { _ in MLTensor.causalMask(queryCount: 4, keyCount: 6) },
    FixtureCase("top_p", "logits") { $0[0].topPFiltered(0.8) },
    FixtureCase("repetition", "logits", "tokens") { $0[0].repetitionPenalized(1.3, tokens: $0[1]) },
    FixtureCase("nms_03_20", "boxes", "scores") {
        MLTensor.nonMaximumSuppression(boxes: $0[0], scores: $0[1], iouThreshold: 0.3, maxOutputCount: 20)
    },
    FixtureCase("nms_05_5", "boxes", "scores") {
        MLTensor.nonMaximumSuppression(boxes: $0[0], scores: $0[1], iouThreshold: 0.5, maxOutputCount: 5)
    },
    FixtureCase("nms_score_threshold", "boxes", "scores") {
        MLTensor.nonMaximumSuppression(
            boxes: $0[0], scores: $0[1], iouThreshold: 0.5, maxOutputCount: 40, scoreThreshold: 0.5)
    },
]

@Suite("Tessera's MLTensor extensions")
struct MLTensorExtensionTests {
    @Test("each extension matches PyTorch (NMS: a NumPy port of torchvision's)", arguments: extensionCases)
    func matchesPyTorch(_ fixture: FixtureCase) async throws {
        try await checkCompleteFixture(fixture)
    }

    @Test("documented values")
    func documented() async {
        #expect(await MLTensor([-1, 2] as [Float]).relu().scalars(of: Float.self) == [0, 2])
        #expect(await MLTensor([-1, 2] as [Int32]).relu().scalars(of: Int32.self) == [0, 2])
        #expect(await MLTensor([3, 4] as [Float]).l2Normalized().scalars(of: Float.self) == [0.6, 0.8])
        #expect(await MLTensor([1, 2, 3, 4] as [Float]).variance().scalars(of: Float.self) == [1.25])
        let lse = await MLTensor([-Float.infinity, -.infinity] as [Float]).logSumExp().scalars(of: Float.self)
        #expect(lse == [-.infinity])
        let mask = await MLTensor.causalMask(queryCount: 3).scalars(of: Bool.self)
        #expect(mask == [true, false, false, true, true, false, true, true, true])
    }

    @Test("multinomial: seeds reproduce, zero weights are never drawn, frequencies follow the weights")
    func multinomial() async {
        let weights = MLTensor(shape: [2, 4], scalars: [0, 1, 0, 3, 5, 0, 5, 0], scalarType: Float.self)
        let a = await weights.multinomial(sampleCount: 4000, seed: 11).scalars(of: Int32.self)
        let b = await weights.multinomial(sampleCount: 4000, seed: 11).scalars(of: Int32.self)
        #expect(a == b)
        let row0 = a[0..<4000]
        let row1 = a[4000...]
        #expect(row0.allSatisfy { $0 == 1 || $0 == 3 })
        #expect(row1.allSatisfy { $0 == 0 || $0 == 2 })
        let threes = Double(row0.filter { $0 == 3 }.count) / 4000
        #expect(Swift.abs(threes - 0.75) < 0.03)
        let zeros = Double(row1.filter { $0 == 0 }.count) / 4000
        #expect(Swift.abs(zeros - 0.5) < 0.03)
        let single = weights.multinomial(seed: 3)
        #expect(single.shape == [2, 1] && single.scalarType == Int32.self)
        let c = await weights.multinomial(sampleCount: 64, seed: 12).scalars(of: Int32.self)
        #expect(c != a[0..<64].map { $0 } + a[4000..<4064].map { $0 })
    }

    @Test("sampling with different seeds reuses one plan")
    func multinomialPlanReuse() {
        // A plan cache of the test's own: tests running in parallel cannot evict the plan.
        GraphExecutor.withPlanCache {
            let weights = MLTensor(shape: [1, 8], scalars: [1, 2, 3, 4, 5, 6, 7, 8], scalarType: Float.self)
            let first = MLTensor.materialize([weights.multinomial(seed: 1)])
            let second = MLTensor.materialize([weights.multinomial(seed: 2)])
            #expect(!first.planCacheHit)
            #expect(second.planCacheHit)
        }
    }

    @Test("the DocC article's examples compile and run")
    func articleExamples() async {
        let x = MLTensor([-1, 0, 1] as [Float])
        _ = [
            x.sigmoid(), x.relu(), x.silu(), x.gelu(), x.gelu(approximation: .tanh), x.erf(),
            x.logSoftmax(alongAxis: -1),
        ]
        let h = MLTensor(randomNormal: [2, 768], seed: 1, scalarType: Float.self)
        let statistics = [
            h.variance(alongAxes: -1), h.standardDeviation(), h.logSumExp(alongAxes: [-1]),
            h.layerNorm(alongAxes: [-1], epsilon: 1e-5), h.rmsNorm(epsilon: 1e-6), h.l2Normalized(),
            h.cosineSimilarity(h[0]),
        ]
        #expect(statistics.map(\.shape) == [[2], [], [2], [2, 768], [2, 768], [2, 768], [2]])
        let q = MLTensor(randomNormal: [1, 2, 16, 8], seed: 2, scalarType: Float.self)
        let out = MLTensor.scaledDotProductAttention(
            query: q, key: q, value: q, mask: MLTensor.causalMask(queryCount: 16))
        #expect(out.shape == [1, 2, 16, 8])
        let logits = MLTensor(randomNormal: [1, 100], seed: 3, scalarType: Float.self)
        let generated = MLTensor(shape: [1, 3], scalars: [4, 8, 4], scalarType: Int32.self)
        let next = logits.repetitionPenalized(1.2, tokens: generated).topPFiltered(0.9).softmax().multinomial(seed: 42)
        #expect(next.shape == [1, 1])
        let corners = MLTensor(randomUniform: [10, 2], in: 0..<50, seed: 4, scalarType: Float.self)
        let boxes = MLTensor(concatenating: [corners, corners + 20], alongAxis: 1)
        let scores = MLTensor(randomUniform: [10], in: 0..<1, seed: 5, scalarType: Float.self)
        let keep = MLTensor.nonMaximumSuppression(
            boxes: boxes, scores: scores, iouThreshold: 0.45, maxOutputCount: 100, scoreThreshold: 0.25)
        let kept = await keep.shapedArray(of: Int32.self).scalars.filter { $0 >= 0 }
        #expect(!kept.isEmpty && kept.count <= 10)
    }

    @Test("top-p keeps at least the most likely token")
    func topPKeepsOne() async {
        let logits = MLTensor([0, 10, 1] as [Float])
        let filtered = await logits.topPFiltered(0.01).scalars(of: Float.self)
        #expect(filtered == [-.infinity, 10, -.infinity])
        let all = await logits.topPFiltered(1).scalars(of: Float.self)
        #expect(all == [0, 10, 1])
    }

    @Test("extensions build one fused program where they are element-wise")
    func fused() {
        // Above `MLTensor.smallFoldingLimit`, so the ops are not folded as built.
        let x = MLTensor(randomNormal: [16, 32], seed: 1, scalarType: Float.self)
        let stats = MLTensor.materialize([x.gelu(approximation: .tanh)])
        #expect(stats.steps == 1 && stats.fusedGroups == 1)
    }
}

@Suite("Philox-4x32-10 generator")
struct PhiloxTests {
    @Test("known-answer vectors of Random123 (kat_vectors, philox4x32 10 rounds)")
    func knownAnswers() {
        let zero = Philox4x32(key: 0).block(0, 0, 0, 0)
        #expect(zero == SIMD4(0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8))
        let ones = Philox4x32(key: UInt64.max).block(.max, .max, .max, .max)
        #expect(ones == SIMD4(0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd))
    }
}

import Testing

@testable import TesseraModels

/// 3-D `conv`, `max_pool` and `avg_pool` against NumPy loops on coremltools-made programs.
@Suite("3-D convolution and pooling")
struct NewOpConvolution3DTests {
    @Test(
        "strides, dilations, groups, bias, every pad type, a weight input and both average modes match NumPy",
        arguments: NewOpFixture.cases("conv_3d") + NewOpFixture.cases("max_pool_3d") + NewOpFixture.cases("avg_pool_3d")
    )
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("a depth smaller than the kernel throws, naming the op", arguments: ["conv_3d", "max_pool_3d"])
    func badShape(_ name: String) throws {
        let op = name == "conv_3d" ? "conv" : "max_pool"
        try #require(NewOpFixture.named("invalid_\(name)")).expectShapeMismatch(naming: op)
    }
}

import Testing

@testable import TesseraModels

/// `space_to_batch` and `batch_to_space` against NumPy's reshape-transpose form of
/// TensorFlow's ops (and coremltools' own test example) on coremltools-made programs.
@Suite("space_to_batch and batch_to_space")
struct NewOpSpaceBatchTests {
    @Test(
        "blocks, paddings and crops match NumPy",
        arguments: NewOpFixture.cases("space_to_batch") + NewOpFixture.cases("batch_to_space"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("sizes that do not split into blocks throw, naming the op", arguments: ["space_to_batch", "batch_to_space"])
    func badShape(_ op: String) throws {
        try #require(NewOpFixture.named("invalid_\(op)")).expectShapeMismatch(naming: op)
    }
}

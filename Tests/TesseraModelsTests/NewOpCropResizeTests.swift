import Testing

@testable import TesseraModels

/// `crop_resize` in its three forms against coremltools' own test values and a NumPy
/// crop-and-resize on coremltools-made programs.
@Suite("crop_resize")
struct NewOpCropResizeTests {
    @Test(
        "every box form, every box coordinate mode, normalized and scaled boxes, pad_value, both align modes",
        arguments: NewOpFixture.cases("crop_resize"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("a roi that is neither a box nor an index and a box throws, naming the op")
    func badShape() throws {
        try #require(NewOpFixture.named("invalid_crop_resize")).expectShapeMismatch(naming: "crop_resize")
    }
}

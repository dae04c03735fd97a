import Testing

@testable import TesseraModels

/// `resample` against a NumPy implementation of its definition (grid_sample's rules outside
/// the image) on coremltools-made programs.
@Suite("resample")
struct NewOpResampleTests {
    @Test(
        "bilinear and nearest, every padding mode, every coordinate mode, both corner alignments",
        arguments: NewOpFixture.cases("resample"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("coordinates for another number of images throw, naming the op")
    func badShape() throws {
        try #require(NewOpFixture.named("invalid_resample")).expectShapeMismatch(naming: "resample")
    }
}

import Testing

@testable import TesseraModels

/// `affine` against coremltools' own test values and a NumPy affine_grid + grid_sample on
/// coremltools-made programs.
@Suite("affine")
struct NewOpAffineTests {
    @Test("coremltools' example, one map per image and one shared map", arguments: NewOpFixture.cases("affine"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("a map count that is neither 1 nor the batch throws, naming the op")
    func badShape() throws {
        try #require(NewOpFixture.named("invalid_affine")).expectShapeMismatch(naming: "affine")
    }
}

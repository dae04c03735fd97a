import Testing

@testable import TesseraModels

/// `l2_pool` against a NumPy loop of `sqrt(Σ x²)` per window on coremltools-made programs.
@Suite("l2_pool")
struct NewOpL2PoolTests {
    @Test(
        "valid, same and custom padding, ceil_mode and 1-D windows match NumPy",
        arguments: NewOpFixture.cases("l2_pool"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("a window wider than the input throws, naming the op")
    func badShape() throws {
        try #require(NewOpFixture.named("invalid_l2_pool")).expectShapeMismatch(naming: "l2_pool")
    }
}

import Testing

@testable import TesseraModels

/// `einsum` against NumPy's `einsum` on coremltools-made programs.
@Suite("einsum")
struct NewOpEinsumTests {
    @Test(
        "both MIL equation forms, renamed letters and broadcast N and H match NumPy",
        arguments: NewOpFixture.cases("einsum"))
    func matchesNumPy(_ fixture: NewOpFixture) throws {
        try fixture.check()
    }

    @Test("letters are numbered in order of appearance, so only the two MIL forms and their renamings lower")
    func equationForms() {
        #expect(MILOp.einsumRank("nchw,nwhu->nchu") == 4)
        #expect(MILOp.einsumRank("abcd, adce -> abce") == 4)
        #expect(MILOp.einsumRank("chw,whr->chr") == 3)
        #expect(MILOp.einsumRank("nchw,nhwu->nchu") == nil)
        #expect(MILOp.einsumRank("ij,jk->ik") == nil)
        #expect(MILOp.einsumRank("chw,whr") == nil)
    }

    @Test("contracted sizes that differ at prediction time throw, naming the op")
    func badShape() throws {
        try #require(NewOpFixture.named("invalid_einsum")).expectShapeMismatch(naming: "einsum")
    }
}

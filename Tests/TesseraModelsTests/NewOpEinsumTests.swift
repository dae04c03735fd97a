import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// `einsum` against NumPy's `einsum` on coremltools-made programs.
@Suite("einsum")
struct NewOpEinsumTests {
    @Test(
        "both MIL equation forms, renamed letters and broadcast N and H match NumPy",
        arguments: NewOpFixture.cases("einsum"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("the lowering fixtures' former unsupported-op case (nchw,nwhu->nchu) now runs and matches NumPy")
    func formerUnsupportedCase() throws {
        let fixture = try #require(LoweringFixture.named("unsupported_einsum"))
        let function = try LoweredFunction(package: try fixture.package(), functionName: "main")
        let outputs = try function.run(try fixture.inputTensors())
        let expected = try fixture.expected(0)
        let got = try #require(outputs[fixture.outputs[0]])
        #expect(got.shape == expected.shape)
        let mismatch = firstMismatch(
            got.scalars(of: Float.self), expected.floats, rtol: fixture.rtol, atol: fixture.atol)
        #expect(mismatch == nil, "\(mismatch ?? "")")
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

import Testing

@testable import TesseraModels

/// `scatter` and `scatter_nd` in every accumulation mode against a NumPy loop that applies
/// each update in index order, on coremltools-made programs.
@Suite("scatter and scatter_nd")
struct NewOpScatterTests {
    @Test(
        "every mode, repeated indices, other axes and index ranks, iOS 17's default mode, int32 data",
        arguments: NewOpFixture.cases("scatter_"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("the fixtures cover every accumulation mode of both ops")
    func everyMode() {
        for mode in MILOp.ScatterMode.allCases {
            #expect(NewOpFixture.named("scatter_\(mode.rawValue)") != nil)
            #expect(NewOpFixture.named("scatter_nd_\(mode.rawValue)") != nil)
        }
    }

    @Test("updates that do not fit the indices throw, naming the op", arguments: ["scatter", "scatter_nd"])
    func badShape(_ op: String) throws {
        try #require(NewOpFixture.named("invalid_\(op)")).expectShapeMismatch(naming: op)
    }
}

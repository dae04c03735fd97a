import Testing

@testable import TesseraModels

/// `non_zero`, whose result shape depends on the data, against NumPy's `argwhere` on
/// coremltools-made programs.
@Suite("non_zero")
struct NewOpNonZeroTests {
    @Test(
        "ranks 2 and 3, Int32 input, no non-zero element, and the count read by later ops",
        arguments: NewOpFixture.cases("non_zero"))
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("the result has one row per non-zero element, of the input's rank")
    func resultShape() throws {
        let fixture = try #require(NewOpFixture.named("non_zero_none"))
        let outputs = try fixture.function().run(try fixture.inputTensors())
        #expect(outputs[fixture.outputs[0]]?.shape == [0, 2])
    }
}

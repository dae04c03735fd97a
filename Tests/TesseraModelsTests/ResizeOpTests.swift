import Testing

@testable import TesseraModels

/// `resize_bilinear`, the iOS 17 `resize` and 3-D `conv_transpose` against PyTorch on the
/// programs `tools/make_resize_op_fixtures.py` writes to `Tests/Fixtures/resize-ops/`.
@Suite("resize_bilinear, resize and 3-D conv_transpose")
struct ResizeOpTests {
    static let all = LoweringFixture.load("resize-ops")

    @Test(
        "every resize_bilinear sampling mode matches grid_sample at coremltools' grid",
        arguments: all.filter { $0.name.hasPrefix("resize_bilinear") })
    func resizeBilinear(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test(
        "resize: linear and nearest, run-time target sizes, a kept axis, one resized axis",
        arguments: all.filter { $0.name.hasPrefix("resize_") && !$0.name.hasPrefix("resize_bilinear") })
    func resize(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test(
        "3-D conv_transpose: strides, dilations, groups, custom and same padding, output_shape",
        arguments: all.filter { $0.name.hasPrefix("conv_transpose3d") })
    func convTranspose3D(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("the grids follow coremltools' documented examples")
    func documentedGrids() {
        // coremltools' resize_bilinear docstring: Xin = 2, Xout = 5 and 6.
        func rounded(_ values: [Double]) -> [Double] { values.map { ($0 * 100).rounded() / 100 } }
        #expect(rounded(ResizeSampling.unalignCorners.grid(input: 2, output: 5)) == [0, 0.1, 0.5, 0.9, 1])
        #expect(rounded(ResizeSampling.alignCorners.grid(input: 2, output: 5)) == [0, 0.25, 0.5, 0.75, 1])
        #expect(rounded(ResizeSampling.default.grid(input: 2, output: 5)) == [0, 0.4, 0.8, 1, 1])
        #expect(rounded(ResizeSampling.offsetCorners.grid(input: 2, output: 5)) == [0.1, 0.3, 0.5, 0.7, 0.9])
        #expect(rounded(ResizeSampling.unalignCorners.grid(input: 2, output: 6)) == [0, 0, 0.33, 0.67, 1, 1])
        #expect(rounded(ResizeSampling.default.grid(input: 2, output: 6)) == [0, 0.33, 0.67, 1, 1, 1])
        #expect(
            rounded(ResizeSampling.offsetCorners.grid(input: 2, output: 6)) == [0.08, 0.25, 0.42, 0.58, 0.75, 0.92])
    }
}

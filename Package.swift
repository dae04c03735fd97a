// swift-tools-version:6.0
import PackageDescription

// The Swift settings every target shares: the `ExistentialAny` upcoming feature (`any` is required
// on existential types). Complete strict-concurrency checking does not come from this list but
// from the Swift 6 language mode (`swiftLanguageModes` at the end).
let strictConcurrency: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "Tessera",
    products: [
        .library(name: "Tessera", targets: ["Tessera"]),
        .executable(name: "tessera", targets: ["tessera"]),
        // The C ABI the Python package (python/) loads: a shared library of @_cdecl functions.
        .library(name: "TesseraCoreMLC", type: .dynamic, targets: ["TesseraCoreMLC"]),
    ],
    targets: [
        // OpenBLAS through its C interface; `libopenblas-dev` provides the header and library.
        .systemLibrary(
            name: "COpenBLAS",
            path: "Sources/COpenBLAS",
            providers: [.apt(["libopenblas-dev"])]
        ),
        // C kernels for loops Swift's SIMD types would scalarize: exp, element-wise binary ops, sqrt,
        // sum, depthwise convolution planes, the convolution epilogue and arg-reductions, in AVX2/FMA
        // and AVX-512 (picked at run time). Swift calls them only on CPUs with AVX2 and FMA.
        .target(name: "CTesseraSIMD"),
        // The tree-ensemble walk over complete binary trees, eight rows per AVX-512 vector (picked at
        // run time), for the classic models' tree ensembles.
        .target(name: "CTesseraTrees"),
        // libpng's simplified API; `libpng-dev` provides the header and library.
        .systemLibrary(
            name: "CLibPNG",
            path: "Sources/CLibPNG",
            providers: [.apt(["libpng-dev"])]
        ),
        // A JPEG decoder over libjpeg-turbo (`libjpeg62-turbo-dev`): C, because libjpeg's error
        // hook must longjmp.
        .target(name: "CTesseraJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        // A CoreVideo stand-in: CVPixelBuffer and its functions, spelled as Apple spells them.
        .target(
            name: "TesseraCoreVideo",
            swiftSettings: strictConcurrency
        ),
        // PNG and JPEG decoding, EXIF orientation, bilinear resizing and Vision's crop-and-scale
        // rules, pixel format conversion: the image work behind Core ML's image feature values.
        .target(
            name: "TesseraImaging",
            dependencies: ["TesseraCoreVideo", "CLibPNG", "CTesseraJPEG"],
            swiftSettings: strictConcurrency
        ),
        .target(
            name: "TesseraKernels",
            dependencies: ["COpenBLAS", "CTesseraSIMD"],
            swiftSettings: strictConcurrency
        ),
        .target(
            name: "TesseraGraph",
            dependencies: ["TesseraKernels"],
            swiftSettings: strictConcurrency
        ),
        .target(
            name: "TesseraTensor",
            dependencies: ["TesseraGraph", "TesseraKernels"],
            swiftSettings: strictConcurrency
        ),
        .target(
            name: "TesseraMultiArray",
            dependencies: ["TesseraKernels", "TesseraTensor"],
            swiftSettings: strictConcurrency
        ),
        .target(
            name: "Tessera",
            dependencies: ["TesseraTensor", "TesseraMultiArray", "TesseraModels", "TesseraCoreVideo"],
            swiftSettings: strictConcurrency
        ),
        .executableTarget(
            name: "tessera",
            // The digits demo prints OpenBLAS's core name from the kernel layer; the step profile
            // of `plan --measure` comes from the graph executor.
            dependencies: ["Tessera", "TesseraKernels", "TesseraGraph"],
            // The demo's digit classifier and its held-out samples (tools/make_demo_model.py), and
            // its shape classifier with sample pictures (tools/make_demo_image_model.py).
            resources: [
                .copy("Resources/DigitsClassifier.mlpackage"), .copy("Resources/digits-samples.json"),
                .copy("Resources/ShapesClassifier.mlpackage"), .copy("Resources/shapes"),
            ],
            swiftSettings: strictConcurrency
        ),
        .target(
            name: "_TesseraTestSupport",
            dependencies: ["TesseraKernels", "TesseraModels"],
            swiftSettings: strictConcurrency
        ),
        .testTarget(
            name: "TesseraKernelsTests",
            dependencies: ["TesseraKernels", "CTesseraSIMD", "_TesseraTestSupport"],
            swiftSettings: strictConcurrency
        ),
        // A process that links OpenBLAS itself (OpenBLASPreloadedTests runs it): OpenBLAS
        // initialises before Tessera, as in an app built with `-lopenblas`.
        .executableTarget(
            name: "OpenBLASPreloadProbe",
            dependencies: ["TesseraKernels", "COpenBLAS"],
            path: "Tests/OpenBLASPreloadProbe",
            swiftSettings: strictConcurrency,
            linkerSettings: [.linkedLibrary("openblas")]
        ),
        .testTarget(
            name: "TesseraGraphTests",
            dependencies: ["TesseraGraph", "_TesseraTestSupport"],
            swiftSettings: strictConcurrency
        ),
        .testTarget(
            name: "TesseraTensorTests",
            dependencies: ["TesseraTensor", "_TesseraTestSupport"],
            swiftSettings: strictConcurrency
        ),
        .testTarget(
            name: "TesseraMultiArrayTests",
            dependencies: ["TesseraMultiArray", "TesseraTensor"],
            swiftSettings: strictConcurrency
        ),
        .executableTarget(
            name: "TesseraBenchmarks",
            dependencies: [
                "TesseraKernels", "TesseraGraph", "TesseraTensor", "TesseraMultiArray", "TesseraModels", "COpenBLAS",
            ],
            path: "Benchmarks/TesseraBenchmarks",
            swiftSettings: strictConcurrency
        ),
        // The libFuzzer targets for every parser of outside data (`make fuzz`, Docs/Reliability.md);
        // built without libFuzzer it replays inputs (findings) once each.
        .executableTarget(
            name: "TesseraFuzz",
            dependencies: [
                "TesseraImaging", "TesseraModels", "TesseraMultiArray", "TesseraProtobuf", "_TesseraTestSupport",
            ],
            path: "Fuzz/TesseraFuzz",
            swiftSettings: strictConcurrency
        ),
        // `make soak`: concurrent predictions checked against serial ones, RSS at start and end.
        .executableTarget(
            name: "TesseraSoak",
            dependencies: ["TesseraModels", "TesseraMultiArray", "TesseraTensor"],
            path: "Soak/TesseraSoak",
            swiftSettings: strictConcurrency
        ),
        // Protobuf wire-format reader: no code generation, no dependencies.
        .target(
            name: "TesseraProtobuf",
            swiftSettings: strictConcurrency
        ),
        // Model formats (Core ML package, spec, MIL program, weight.bin), lowering, and the
        // MLModel API (feature values and providers, descriptions, predictions).
        .target(
            name: "TesseraModels",
            dependencies: [
                "TesseraProtobuf", "TesseraKernels", "TesseraGraph", "TesseraTensor", "TesseraMultiArray",
                "TesseraCoreVideo", "TesseraImaging", "CTesseraTrees",
            ],
            swiftSettings: strictConcurrency
        ),
        .testTarget(
            name: "TesseraProtobufTests",
            dependencies: ["TesseraProtobuf"],
            swiftSettings: strictConcurrency
        ),
        .testTarget(
            name: "TesseraModelsTests",
            dependencies: [
                "TesseraModels", "TesseraProtobuf", "TesseraTensor", "TesseraMultiArray", "TesseraCoreVideo",
                "TesseraImaging", "_TesseraTestSupport",
            ],
            swiftSettings: strictConcurrency
        ),
        // The command line's own logic (`@testable import tessera`): how `--input` values are read.
        .testTarget(
            name: "TesseraCLITests",
            dependencies: ["tessera", "Tessera", "_TesseraTestSupport"],
            swiftSettings: strictConcurrency
        ),
        // What `import Tessera` alone gives a Core ML app.
        .testTarget(
            name: "TesseraTests",
            dependencies: ["Tessera"],
            swiftSettings: strictConcurrency
        ),
        .testTarget(
            name: "TesseraImagingTests",
            dependencies: ["TesseraImaging", "TesseraCoreVideo", "_TesseraTestSupport"],
            swiftSettings: strictConcurrency
        ),
        // C entry points over MLModel for the Python package (python/tessera/_native.py).
        .target(
            name: "TesseraCoreMLC",
            dependencies: ["TesseraModels", "TesseraMultiArray", "TesseraTensor"],
            swiftSettings: strictConcurrency
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Fuzz builds (`tools/fuzz.sh` sets TESSERA_FUZZ_COVERAGE=1; never set otherwise, so the package has
// no unsafe flags as a dependency): libFuzzer's edge coverage in every Swift target, and comparison
// tracing (trace-cmp, which steers mutations toward the magic numbers and lengths a parser compares
// with) everywhere but the compute targets. In the kernels', graph's and tensor's inner loops the
// tracing calls took about 30 % of the `package` target's CPU and guide no parser.
if Context.environment["TESSERA_FUZZ_COVERAGE"] != nil {
    let computeTargets: Set<String> = ["TesseraKernels", "TesseraGraph", "TesseraTensor"]
    for target in package.targets where target.type != .system && !target.name.hasPrefix("C") {
        let kinds = "edge,inline-8bit-counters,pc-table" + (computeTargets.contains(target.name) ? "" : ",trace-cmp")
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize-coverage=" + kinds])]
    }
}

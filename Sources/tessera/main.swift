import Tessera

/// The `tessera` command line.
///
///     tessera demo                                   classify the embedded digits and shape pictures
///     tessera describe MODEL                         inputs, outputs, metadata, op counts
///     tessera predict MODEL --input NAME=FILE.npy …  run one prediction
///     tessera compile MODEL -o DIR                   compile for MLModel(contentsOf:)
///     tessera plan MODEL [--measure]                 compute plan: one row per operation with its cost
///     tessera version                                print the version
let arguments = Array(CommandLine.arguments.dropFirst())
let help = """
    tessera \(TesseraVersion.string): Core ML's programming model on Linux CPUs.

    usage: tessera <command>

      demo                       classify the embedded handwritten digits with MLModel (MLTensor
                                 pre- and post-processing), then PNG and JPEG pictures of shapes
                                 with an image-input model
      describe MODEL             print a .mlpackage's or .mlmodel's inputs, outputs, metadata and op counts
      predict MODEL --input NAME=FILE.npy … [--output-dir DIR]
                                 run one prediction; print the outputs, write multi-arrays as .npy
      compile MODEL -o DIR       compile a model into DIR/<name>.mlmodelc for MLModel(contentsOf:)
      plan MODEL [--function NAME] [--all] [--measure [--runs N]]
                                 the compute plan: one row per operation (output, shape, device,
                                 estimated cost); --measure times every plan step of real
                                 predictions and sums the time by operation and kernel path
      version                    print the version
    """

do {
    switch arguments.first {
    case "demo":
        try DigitsDemo.run()
        print("\n")
        try ImageDemo.run()
    case "describe":
        try DescribeCommand.run(Array(arguments.dropFirst()))
    case "predict":
        try PredictCommand.run(Array(arguments.dropFirst()))
    case "compile":
        try CompileCommand.run(Array(arguments.dropFirst()))
    case "plan":
        try PlanCommand.run(Array(arguments.dropFirst()))
    case "version", "--version":
        print("tessera \(TesseraVersion.string)")
    case nil, "help", "--help", "-h":
        print(help)
    default:
        throw CLIError("unknown command '\(arguments[0])'; try 'tessera help'")
    }
} catch {
    FileHandle.standardError.write(Data("tessera: \(error)\n".utf8))
    exit(1)
}

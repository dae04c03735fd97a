import Tessera

/// The `tessera` command line.
///
///     tessera demo      run the embedded pipeline and print what each step did
///     tessera version   print the version
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "demo":
    KernelPipelineDemo.run()
case "version", "--version":
    print("tessera \(TesseraVersion.string)")
case nil, "help", "--help", "-h":
    print(
        """
        tessera \(TesseraVersion.string): Core ML's programming model on Linux CPUs.

        usage: tessera <command>

          demo      run the embedded image-classification pipeline through the CPU kernels
          version   print the version
        """)
default:
    FileHandle.standardError.write(Data("tessera: unknown command '\(arguments[0])'; try 'tessera help'\n".utf8))
    exit(2)
}

#if TESSERA_LIBFUZZER
    import Foundation

    /// libFuzzer's entry point when its own `main` is not linked (`libclang_rt.fuzzer_no_main`):
    /// it parses the flags, then calls `callback` with each input.
    @_silgen_name("LLVMFuzzerRunDriver")
    func llvmFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// The target libFuzzer's callback runs (a C callback cannot capture it).
    nonisolated(unsafe) var currentTarget: FuzzTarget?

    /// Hands the process to libFuzzer with `arguments` (its flags and corpus directories).
    func fuzz(_ target: FuzzTarget, arguments: [String]) -> Never {
        currentTarget = target
        var strings = [CommandLine.arguments[0]] + arguments
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.indices.map { strdup(strings[$0]) } + [nil]
        var argc = CInt(strings.count)
        let status = pointers.withUnsafeMutableBufferPointer { buffer in
            var argv = buffer.baseAddress!
            return llvmFuzzerRunDriver(&argc, &argv) { data, count in
                currentTarget!.run(count == 0 ? Data() : Data(bytes: data!, count: count))
                return 0
            }
        }
        strings.removeAll()
        exit(status)
    }
#endif

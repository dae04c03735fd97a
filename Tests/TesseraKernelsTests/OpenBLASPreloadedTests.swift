import Foundation
import Testing

@testable import TesseraKernels

/// Tessera's OpenBLAS settings in a process that linked OpenBLAS itself, so the library had
/// initialised (with its own thread count and kernel family) before Tessera's first product.
@Suite("OpenBLAS loaded before Tessera")
struct OpenBLASPreloadedTests {
    /// The `OpenBLASPreloadProbe` binary, built next to this test bundle by `swift build`.
    static var probe: URL {
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return bundle.deletingLastPathComponent().appendingPathComponent("OpenBLASPreloadProbe")
    }

    /// Runs the probe without OpenBLAS settings in its environment and parses its lines.
    static func runProbe() throws -> [String: String] {
        let process = Process()
        process.executableURL = probe
        var environment = ProcessInfo.processInfo.environment
        environment["OPENBLAS_NUM_THREADS"] = nil
        environment["OPENBLAS_CORETYPE"] = nil
        environment["TESSERA_NUM_THREADS"] = "2"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the probe failed")
        var fields: [String: String] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return fields
    }

    @Test("a preloaded OpenBLAS ends up single-threaded with the CPU's kernel family")
    func preloadedLibraryIsAdopted() throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.probe.path),
            "build the probe with `swift build --build-tests` (looked for \(Self.probe.path))")
        let fields = try Self.runProbe()
        // The process's library was there first: Tessera did not load it.
        #expect(fields["origin"] == "shared" || fields["origin"] == "privateCopy", "\(fields)")
        #expect(fields["tessera_threads"] == "1", "\(fields)")
        if let preferred = OpenBLASLibrary.preferredCoreType() {
            #expect(fields["tessera_core"]?.lowercased() == preferred.lowercased(), "\(fields)")
        }
        if fields["origin"] == "shared" {
            // Shared: the process's own library is the one set to one thread.
            #expect(fields["process_threads_after"] == "1", "\(fields)")
        } else {
            // A private copy: only when the process's library runs another kernel family.
            #expect(fields["process_core"]?.lowercased() != fields["tessera_core"]?.lowercased(), "\(fields)")
        }
        let error = fields["max_error"].flatMap { Float($0) }
        #expect(error != nil && error! < 1e-3, "the product through Tessera's OpenBLAS is wrong: \(fields)")
    }
}

// The fuzz targets of Docs/Reliability.md, one executable:
//
//   TesseraFuzz list                        the targets
//   TesseraFuzz seed TARGET DIR             writes TARGET's seed corpus (from Tests/Fixtures) to DIR
//   TesseraFuzz TARGET FILE…                runs each file once (replays a finding; any build)
//   TesseraFuzz TARGET [libFuzzer flags] CORPUS…
//                                           fuzzes, in a build made by `make fuzz` (libFuzzer
//                                           linked, TESSERA_LIBFUZZER defined)
import Foundation

/// The repository's `Tests/Fixtures`, found from this source file.
let fixtures: URL = {
    var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while directory.path != "/" {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            return directory.appendingPathComponent("Tests/Fixtures")
        }
        directory.deleteLastPathComponent()
    }
    return URL(fileURLWithPath: "Tests/Fixtures")
}()

func usage() -> Never {
    let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
    FileHandle.standardError.write(
        Data("usage: TesseraFuzz list | seed TARGET DIR | TARGET [FILE…|libFuzzer args]\ntargets: \(names)\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { usage() }

switch arguments[1] {
case "list":
    for target in FuzzTarget.all { print("\(target.name)\t\(target.summary)") }
case "seed":
    guard arguments.count == 4, let target = FuzzTarget.named(arguments[2]) else { usage() }
    let directory = URL(fileURLWithPath: arguments[3])
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let seeds = try target.seeds(fixtures)
    for (index, seed) in seeds.enumerated() {
        try seed.write(to: directory.appendingPathComponent(String(format: "seed-%03d", index)))
    }
    print("\(target.name): \(seeds.count) seeds in \(directory.path)")
default:
    guard let target = FuzzTarget.named(arguments[1]) else { usage() }
    #if TESSERA_LIBFUZZER
        fuzz(target, arguments: Array(arguments.dropFirst(2)))
    #else
        for path in arguments.dropFirst(2) {
            target.run(try Data(contentsOf: URL(fileURLWithPath: path)))
            print("\(target.name): \(path) ran")
        }
    #endif
}

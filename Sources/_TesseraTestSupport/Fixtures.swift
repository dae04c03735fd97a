import Foundation
import TesseraModels

/// Locates checked-in test fixtures without SwiftPM resources.
package enum Fixtures {
    /// The repository root: the nearest directory above this source file holding `Package.swift`.
    package static let repositoryRoot: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        preconditionFailure("[Fixtures] no Package.swift above \(#filePath)")
    }()

    /// The URL of `Tests/Fixtures/<name>`, e.g. `Fixtures.url("kernels/gemm_plain_a.npy")`.
    package static func url(_ name: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/Fixtures").appendingPathComponent(name)
    }

    /// Reads `Tests/Fixtures/<name>` as an `.npy` array (the library's reader).
    package static func npy(_ name: String) throws(NumPyFileError) -> NumPyArray {
        try NumPyArray(contentsOf: url(name))
    }
}

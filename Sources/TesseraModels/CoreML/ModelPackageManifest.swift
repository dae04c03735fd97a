import Foundation

/// The `Manifest.json` of an `.mlpackage` directory: which item is the root model and where
/// the weights live.
///
/// ```json
/// { "fileFormatVersion": "1.0.0",
///   "itemInfoEntries": { "5ADC…": { "author": "com.apple.CoreML", "name": "model.mlmodel",
///                                   "path": "com.apple.CoreML/model.mlmodel", … }, … },
///   "rootModelIdentifier": "5ADC…" }
/// ```
///
/// Item keys are random UUIDs (upper-case on macOS, lower-case on Linux); paths are relative
/// to `<package>/Data/`. See coremltools' `modelpackage/src/ModelPackage.cpp`.
package struct ModelPackageManifest: Sendable, Equatable {
    /// One entry of `itemInfoEntries`.
    package struct Item: Sendable, Equatable {
        /// The item's key.
        package var identifier: String
        /// The item's path relative to `Data/`.
        package var path: String
        /// The item's name (`model.mlmodel`, `weights`).
        package var name: String
        /// Who wrote it (`com.apple.CoreML`).
        package var author: String
    }

    /// The manifest format version (`1.0.0`).
    package var fileFormatVersion: String
    /// The items by identifier.
    package var items: [String: Item]
    /// The identifier of the root model item.
    package var rootModelIdentifier: String

    /// Parses a manifest.
    ///
    /// - Throws: ``ModelFormatError/Kind/invalidManifest`` when the JSON is invalid, an
    ///   entry lacks its path, the root item is missing, or a path is absolute or leaves the
    ///   package with `..`.
    package init(json data: Data, file: String = "Manifest.json") throws {
        func invalid(_ message: String) -> ModelFormatError {
            ModelFormatError(.invalidManifest, file: file, message)
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw invalid("the manifest is not valid JSON (\(error.localizedDescription))")
        }
        guard let root = object as? [String: Any] else { throw invalid("the manifest is not a JSON object") }
        guard let rootIdentifier = root["rootModelIdentifier"] as? String else {
            throw invalid("the manifest has no \"rootModelIdentifier\" string")
        }
        guard let entries = root["itemInfoEntries"] as? [String: Any] else {
            throw invalid("the manifest has no \"itemInfoEntries\" object")
        }
        var items: [String: Item] = [:]
        for (identifier, value) in entries {
            guard let entry = value as? [String: Any], let path = entry["path"] as? String else {
                throw invalid("item \"\(identifier)\" has no \"path\" string")
            }
            guard Self.isSafeRelativePath(path) else {
                throw invalid("item \"\(identifier)\" has path \"\(path)\", which leaves the package")
            }
            items[identifier] = Item(
                identifier: identifier, path: path, name: entry["name"] as? String ?? "",
                author: entry["author"] as? String ?? "")
        }
        guard items[rootIdentifier] != nil else {
            let known = items.keys.sorted().joined(separator: ", ")
            throw invalid("the root model \"\(rootIdentifier)\" is not among the items (\(known))")
        }
        self.fileFormatVersion = root["fileFormatVersion"] as? String ?? ""
        self.items = items
        self.rootModelIdentifier = rootIdentifier
    }

    /// The root model item.
    package var rootModel: Item { items[rootModelIdentifier]! }

    /// The weights directory item: the Core ML item named `weights`, if any.
    package var weights: Item? {
        items.values.filter { $0.name == "weights" }.min { $0.identifier < $1.identifier }
    }

    /// Whether `path` is relative, non-empty and has no `..` component.
    static func isSafeRelativePath(_ path: String) -> Bool {
        guard !path.isEmpty, !path.hasPrefix("/") else { return false }
        return !path.split(separator: "/").contains("..")
    }
}

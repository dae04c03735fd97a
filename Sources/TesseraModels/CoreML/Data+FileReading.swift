import Foundation

extension Data {
    /// The bytes of the file at `url`, as `Data(contentsOf:options:)` reads them, except that an
    /// empty file gives an empty `Data` without calling Foundation.
    ///
    /// Foundation on Linux reads a file whose size is 0 through a 4,096-byte `malloc` buffer in
    /// case it is a `/proc`-style file, and an empty result never frees that buffer
    /// (`readBytesFromFile` in swift-foundation, Swift 6.3): every empty model file a load
    /// reads would leak 4 KiB. Model files are never such files, so an empty one is read as
    /// empty here. A file that cannot be read still throws Foundation's error.
    ///
    /// ```swift
    /// let bytes = try Data(readingFile: url, options: .mappedIfSafe)   // Data() for an empty file
    /// ```
    package init(readingFile url: URL, options: Data.ReadingOptions = []) throws {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        if let size = attributes?[.size] as? NSNumber, size.intValue == 0,
            attributes?[.type] as? FileAttributeType == .typeRegular,
            FileManager.default.isReadableFile(atPath: url.path)
        {
            self.init()
            return
        }
        try self.init(contentsOf: url, options: options)
    }
}

import Foundation

#if !canImport(Darwin)
    extension URL {
        /// The current user's Application Support directory: on Linux `$XDG_DATA_HOME`, or
        /// `~/.local/share` when it is unset. **Linux compatibility extension**: Foundation on
        /// Apple platforms has this property and Core ML apps cache compiled models under it;
        /// Foundation on Linux lacks it.
        ///
        /// ```swift
        /// let cache = URL.applicationSupportDirectory.appendingPathComponent("Digits.mlmodelc")
        /// ```
        public static var applicationSupportDirectory: URL {
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        }
    }
#endif

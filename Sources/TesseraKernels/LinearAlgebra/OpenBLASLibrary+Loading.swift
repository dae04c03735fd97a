import COpenBLAS
import Foundation

/// The OpenBLAS that Tessera calls, as a `dlopen` handle, and how it came to be: the steps
/// ``OpenBLASLibrary`` describes (load it, share the process's, or load a private copy).
struct LoadedOpenBLAS {
    let handle: UnsafeMutableRawPointer
    let origin: OpenBLASLibrary.Origin

    /// The names OpenBLAS goes by (the runtime package's, then the development symlink).
    static let sonames = ["libopenblas.so.0", "libopenblas.so"]

    /// Finds the process's OpenBLAS and adopts it, or loads one with Tessera's settings.
    /// Traps with install instructions when there is none to load.
    static func find() -> LoadedOpenBLAS {
        if let existing = sonames.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_NOLOAD) }).first {
            return adopt(existing)
        }
        let handle = withTesseraSettings { sonames.lazy.compactMap { dlopen($0, RTLD_NOW | RTLD_GLOBAL) }.first }
        guard let handle else {
            kernelFailure(
                "[OpenBLAS] libopenblas.so.0 could not be loaded (\(String(cString: dlerror()))); "
                    + "install it with `apt-get install libopenblas-dev` (or run `make deps`)")
        }
        return LoadedOpenBLAS(handle: handle, origin: .loadedByTessera)
    }

    /// The process's OpenBLAS when it runs the wanted kernel family (or cannot run another:
    /// a build without `DYNAMIC_ARCH`); otherwise a private copy of the same file, loaded into
    /// a namespace of its own with Tessera's settings, falling back to the process's copy.
    static func adopt(_ existing: UnsafeMutableRawPointer) -> LoadedOpenBLAS {
        func text(_ name: String) -> String? {
            guard let address = dlsym(existing, name) else { return nil }
            let function = unsafeBitCast(address, to: tessera_openblas_get_corename_fn.self)
            return function().map { String(cString: $0) }
        }
        let coreName = text("openblas_get_corename") ?? "unknown"
        let dynamicArch = text("openblas_get_config")?.contains("DYNAMIC_ARCH") ?? false
        let wanted = getenv("OPENBLAS_CORETYPE").map { String(cString: $0) } ?? OpenBLASLibrary.preferredCoreType()
        guard let wanted, dynamicArch, wanted.lowercased() != coreName.lowercased() else {
            return LoadedOpenBLAS(handle: existing, origin: .shared)
        }
        if let path = filePath(of: existing), let copy = loadPrivateCopy(path) {
            return LoadedOpenBLAS(handle: copy, origin: .privateCopy(processCoreName: coreName))
        }
        return LoadedOpenBLAS(handle: existing, origin: .shared)
    }

    /// The file a loaded library came from (found through one of its symbols).
    static func filePath(of handle: UnsafeMutableRawPointer) -> String? {
        guard let address = dlsym(nil, "dladdr"), let symbol = dlsym(handle, "cblas_sgemm") else { return nil }
        let dladdr = unsafeBitCast(address, to: tessera_dladdr_fn.self)
        var info = tessera_dl_info()
        guard dladdr(symbol, &info) != 0, let name = info.dli_fname else { return nil }
        return String(cString: name)
    }

    /// Loads `path` into a new link-map namespace (glibc's `dlmopen` with `LM_ID_NEWLM`), where
    /// it initialises afresh, reading Tessera's settings; `nil` when that is not possible.
    static func loadPrivateCopy(_ path: String) -> UnsafeMutableRawPointer? {
        guard let address = dlsym(nil, "dlmopen") else { return nil }
        let dlmopen = unsafeBitCast(address, to: tessera_dlmopen_fn.self)
        let newNamespace = -1  // LM_ID_NEWLM
        return withTesseraSettings { dlmopen(newNamespace, path, RTLD_NOW | RTLD_LOCAL) }
    }

    /// Runs `load` with `OPENBLAS_NUM_THREADS=1` and `OPENBLAS_CORETYPE` (the CPU's best
    /// family) set where the user has not set them, then restores the environment.
    static func withTesseraSettings(_ load: () -> UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        let settings = [
            ("OPENBLAS_NUM_THREADS", "1"),
            ("OPENBLAS_CORETYPE", OpenBLASLibrary.preferredCoreType()),
        ]
        var changed: [String] = []
        for (name, value) in settings {
            if let value, getenv(name) == nil {
                setenv(name, value, 0)
                changed.append(name)
            }
        }
        defer { for name in changed { unsetenv(name) } }
        return load()
    }
}

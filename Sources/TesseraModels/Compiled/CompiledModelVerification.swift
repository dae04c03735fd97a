import Dispatch
import Synchronization

/// A compiled model's content checksum, computed on other threads while the load goes on.
///
/// The checksum covers every byte after the header, tens to hundreds of megabytes, while
/// decoding the specification and lowering the program read only a small part of them, on the
/// loading thread alone. So ``CompiledModelReader`` starts the checksum here (a Dispatch worker
/// spreading its chunks over all cores, ``CompiledModelHeader/contentChecksum(of:progress:)``),
/// decodes while it runs, and the load calls ``finish()`` before it uses anything only a
/// verified file may give: the stored prepared weights are registered by ``finish()`` itself,
/// after the checksum passes, and a model is returned only once it has.
///
/// Reading the unverified bytes meanwhile is safe: the decoding and lowering treat them as
/// they treat an `.mlpackage` from outside (every blob checked, every malformed field a typed
/// error), and a load whose decoding or lowering fails on a damaged file reports the failed
/// checksum, not the symptom (``intactOrThrow(_:)``).
final class CompiledModelVerification: Sendable {
    /// Where the checksum is.
    private enum State {
        /// Queued; nobody has started it.
        case waiting
        case running
        case passed
        case failed
    }

    private let state = Mutex<State>(.waiting)
    private let file: MappedFile
    private let expected: UInt64
    private let done = DispatchSemaphore(value: 0)
    /// Work to run once, on the first ``finish()`` after the checksum passed.
    private let afterPassing = Mutex<(@Sendable () -> Void)?>(nil)
    private let name: String
    private let contentSize: Int
    private let progress: ProgressReporter

    /// Starts checksumming `file`'s contents against `expected` on a Dispatch worker.
    ///
    /// - Parameters:
    ///   - afterPassing: Runs once, on the thread that first calls ``finish()`` after the
    ///     checksum passed (registering the stored prepared weights).
    init(
        _ file: MappedFile, expected: UInt64, contentSize: Int, name: String, progress: ProgressReporter,
        afterPassing: (@Sendable () -> Void)? = nil
    ) {
        self.file = file
        self.expected = expected
        self.name = name
        self.contentSize = contentSize
        self.progress = progress
        self.afterPassing.withLock { $0 = afterPassing }
        DispatchQueue.global(qos: .userInitiated).async { [self] in runIfWaiting() }
    }

    /// Computes the checksum here unless another thread has started it: the worker, or (when
    /// every Dispatch worker is busy, e.g. with loads waiting in ``finish()``) the loading
    /// thread itself, so no load waits for a worker that cannot start.
    private func runIfWaiting() {
        let claimed = state.withLock { state -> Bool in
            guard state == .waiting else { return false }
            state = .running
            return true
        }
        guard claimed else { return }
        let checksum = CompiledModelHeader.contentChecksum(of: file.bytes)
        state.withLock { $0 = checksum == expected ? .passed : .failed }
        done.signal()
    }

    /// Waits for the checksum; throws when it failed, else runs the work kept for after it
    /// passed (the first time) and returns.
    ///
    /// - Throws: ``MLModelError`` `.io`: the compiled model is corrupted.
    func finish() throws {
        let passed = waitForResult()
        guard passed else { throw corrupted }
        progress.report(.verifying, contentSize, of: contentSize)
        afterPassing.withLock { work in
            work?()
            work = nil
        }
    }

    /// `error`, unless the checksum failed: then the checksum's error, which says what went
    /// wrong (a damaged file) where `error` gives only its symptom. Waits for the checksum.
    func intactOrThrow(_ error: any Error) -> any Error {
        waitForResult() ? error : corrupted
    }

    /// Whether the checksum passed, once it finished.
    private func waitForResult() -> Bool {
        runIfWaiting()
        if let result = state.withLock({ $0 == .running ? nil : $0 == .passed }) { return result }
        done.wait()
        done.signal()  // later waits return at once
        return state.withLock { $0 == .passed }
    }

    /// The error of a file that fails its checksum.
    private var corrupted: MLModelError {
        MLModelError(
            .io,
            "cannot load \(name): \(CompiledModelHeader.fileName) fails its checksum; the compiled model is "
                + "corrupted: recompile it with MLModel.compileModel(at:)")
    }
}

#if TESSERA_TSAN
    import TesseraKernels

    /// In `make tsan` builds, the module's locks are pthread mutexes ThreadSanitizer can see
    /// (see `SanitizerVisibleMutex`); this shadows `Synchronization.Mutex` in the module.
    typealias Mutex<Value> = SanitizerVisibleMutex<Value>
#endif

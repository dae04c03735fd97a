import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A buffer of pixels in main memory: a **Linux stand-in** for CoreVideo's `CVBuffer`, spelled
/// as Apple spells it so Core ML code that makes, fills and reads pixel buffers compiles
/// unchanged.
///
/// Make one with ``CVPixelBufferCreate(_:_:_:_:_:_:)`` or
/// ``CVPixelBufferCreateWithBytes(_:_:_:_:_:_:_:_:_:_:)`` and read it with the
/// `CVPixelBufferGet…` functions. What it is not: there is no IOSurface, no GPU or Metal
/// texture, no pixel buffer pool, no attachments and no color management; the attributes
/// dictionary is accepted and ignored. Rows are 64-byte aligned, as CoreVideo aligns them.
/// Locking counts calls, as CoreVideo does; the base address is valid whether or not the
/// buffer is locked (it is plain memory), but code written for Apple should lock anyway.
///
/// ```swift
/// var buffer: CVPixelBuffer?
/// CVPixelBufferCreate(kCFAllocatorDefault, 64, 48, kCVPixelFormatType_32BGRA, nil, &buffer)
/// CVPixelBufferLockBaseAddress(buffer!, [])
/// let pixels = CVPixelBufferGetBaseAddress(buffer!)!     // 48 rows of CVPixelBufferGetBytesPerRow bytes
/// CVPixelBufferUnlockBaseAddress(buffer!, [])
/// ```
///
/// The class is `@unchecked Sendable` so a frame can be handed to a prediction task; the pixels
/// themselves are not synchronised: do not write them while another task reads them.
public final class CVBuffer: @unchecked Sendable {
    /// One plane: where it starts and how it is laid out.
    package struct Plane {
        package let baseAddress: UnsafeMutableRawPointer
        package let width: Int
        package let height: Int
        package let bytesPerRow: Int
    }

    /// The width in pixels.
    package let width: Int
    /// The height in pixels.
    package let height: Int
    /// The pixel format.
    package let pixelFormatType: OSType
    /// The planes (one for packed formats).
    package let planes: [Plane]
    /// The bytes the planes span, from the first plane's base address.
    package let dataSize: Int
    private let release: Release
    private let lockCount = Mutex(0)

    /// Who frees the memory.
    private enum Release {
        /// The buffer allocated it with `malloc`.
        case owned(UnsafeMutableRawPointer)
        /// The caller's memory, with the callback to call when the buffer goes away.
        case callback(CVPixelBufferReleaseBytesCallback?, UnsafeMutableRawPointer?, UnsafeRawPointer)
    }

    /// The largest buffer the stand-in allocates: 1 GiB.
    package static let maximumByteCount = 1 << 30

    /// Allocates a zero-filled buffer, or returns the `CVReturn` code saying why not.
    package static func allocate(width: Int, height: Int, pixelFormatType: OSType) -> Result<CVBuffer, CVError> {
        guard width > 0, height > 0 else { return .failure(CVError(kCVReturnInvalidSize)) }
        guard let layout = PixelFormatLayout.of(pixelFormatType) else {
            return .failure(CVError(kCVReturnInvalidPixelFormat))
        }
        var offsets: [(offset: Int, width: Int, height: Int, bytesPerRow: Int)] = []
        var total = 0
        for plane in layout.planes {
            let planeWidth = (width + plane.subsampling - 1) / plane.subsampling
            let planeHeight = (height + plane.subsampling - 1) / plane.subsampling
            let (rowBytes, rowOverflow) = planeWidth.multipliedReportingOverflow(by: plane.bytesPerPixel)
            guard !rowOverflow, rowBytes <= maximumByteCount else { return .failure(CVError(kCVReturnInvalidSize)) }
            let bytesPerRow = (rowBytes + 63) & ~63
            let (bytes, overflow) = bytesPerRow.multipliedReportingOverflow(by: planeHeight)
            guard !overflow, total + bytes <= maximumByteCount else { return .failure(CVError(kCVReturnInvalidSize)) }
            offsets.append((total, planeWidth, planeHeight, bytesPerRow))
            total += bytes
        }
        guard let memory = calloc(total, 1) else { return .failure(CVError(kCVReturnAllocationFailed)) }
        let planes = offsets.map {
            Plane(baseAddress: memory + $0.offset, width: $0.width, height: $0.height, bytesPerRow: $0.bytesPerRow)
        }
        return .success(
            CVBuffer(
                width: width, height: height, pixelFormatType: pixelFormatType, planes: planes, dataSize: total,
                release: .owned(memory)))
    }

    /// Wraps the caller's memory (a packed format), or returns the code saying why not.
    package static func wrap(
        width: Int, height: Int, pixelFormatType: OSType, baseAddress: UnsafeMutableRawPointer, bytesPerRow: Int,
        releaseCallback: CVPixelBufferReleaseBytesCallback?, releaseRefCon: UnsafeMutableRawPointer?
    ) -> Result<CVBuffer, CVError> {
        guard width > 0, height > 0 else { return .failure(CVError(kCVReturnInvalidSize)) }
        guard let layout = PixelFormatLayout.of(pixelFormatType) else {
            return .failure(CVError(kCVReturnInvalidPixelFormat))
        }
        guard !layout.isPlanar else { return .failure(CVError(kCVReturnUnsupported)) }
        let (rowBytes, overflow) = width.multipliedReportingOverflow(by: layout.planes[0].bytesPerPixel)
        guard !overflow, bytesPerRow >= rowBytes else { return .failure(CVError(kCVReturnInvalidArgument)) }
        let (size, sizeOverflow) = bytesPerRow.multipliedReportingOverflow(by: height)
        guard !sizeOverflow else { return .failure(CVError(kCVReturnInvalidSize)) }
        let plane = Plane(baseAddress: baseAddress, width: width, height: height, bytesPerRow: bytesPerRow)
        return .success(
            CVBuffer(
                width: width, height: height, pixelFormatType: pixelFormatType, planes: [plane], dataSize: size,
                release: .callback(releaseCallback, releaseRefCon, UnsafeRawPointer(baseAddress))))
    }

    private init(width: Int, height: Int, pixelFormatType: OSType, planes: [Plane], dataSize: Int, release: Release) {
        self.width = width
        self.height = height
        self.pixelFormatType = pixelFormatType
        self.planes = planes
        self.dataSize = dataSize
        self.release = release
    }

    deinit {
        switch release {
        case .owned(let memory): free(memory)
        case .callback(let callback, let refCon, let base): callback?(refCon, base)
        }
    }

    /// Counts a lock.
    package func lock() { lockCount.withLock { $0 += 1 } }

    /// Counts an unlock; `false` when the buffer was not locked.
    package func unlock() -> Bool {
        lockCount.withLock { count in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
    }
}

/// A CoreVideo image buffer: the same type as ``CVBuffer``, as on Apple platforms.
public typealias CVImageBuffer = CVBuffer

/// A CoreVideo pixel buffer: the same type as ``CVBuffer``, as on Apple platforms.
public typealias CVPixelBuffer = CVImageBuffer

/// Called when a buffer made by ``CVPixelBufferCreateWithBytes(_:_:_:_:_:_:_:_:_:_:)`` goes
/// away, with the `releaseRefCon` and the base address it was given.
public typealias CVPixelBufferReleaseBytesCallback =
    @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Void

/// A failed CoreVideo call's code, for the stand-in's internal `Result`s.
package struct CVError: Error, Sendable, Equatable {
    /// The `kCVReturn…` code.
    package let code: CVReturn

    /// Wraps a code.
    package init(_ code: CVReturn) { self.code = code }
}

/// Flags for ``CVPixelBufferLockBaseAddress(_:_:)`` and
/// ``CVPixelBufferUnlockBaseAddress(_:_:)``.
///
/// ```swift
/// CVPixelBufferLockBaseAddress(buffer, .readOnly)
/// ```
public struct CVPixelBufferLockFlags: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: UInt64

    /// Creates flags from raw bits.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The caller only reads the pixels.
    public static let readOnly = CVPixelBufferLockFlags(rawValue: 1)
}

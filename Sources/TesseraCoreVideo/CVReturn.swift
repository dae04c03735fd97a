// swift-format-ignore-file: AlwaysUseLowerCamelCase
// CoreVideo's C names, spelled as Apple spells them.

/// The result code of a CoreVideo function: `kCVReturnSuccess` (0) or one of the negative
/// `kCVReturn…` error codes, with Apple's values.
///
/// ```swift
/// var buffer: CVPixelBuffer?
/// let status = CVPixelBufferCreate(kCFAllocatorDefault, 224, 224, kCVPixelFormatType_32BGRA, nil, &buffer)
/// status == kCVReturnSuccess      // true
/// ```
public typealias CVReturn = Int32

/// The call succeeded.
public let kCVReturnSuccess: CVReturn = 0
/// The first error code.
public let kCVReturnFirst: CVReturn = -6660
/// An unspecified error (for example an unlock without a lock).
public let kCVReturnError: CVReturn = -6660
/// An argument is invalid (for example a nil output pointer or a too small `bytesPerRow`).
public let kCVReturnInvalidArgument: CVReturn = -6661
/// The memory for the pixels could not be allocated.
public let kCVReturnAllocationFailed: CVReturn = -6662
/// The operation is not supported (for example plane access on a non-planar buffer).
public let kCVReturnUnsupported: CVReturn = -6663
/// The pixel format is not one the stand-in supports.
public let kCVReturnInvalidPixelFormat: CVReturn = -6680
/// The width or height is zero, negative or too large.
public let kCVReturnInvalidSize: CVReturn = -6681
/// The attributes dictionary holds an invalid value.
public let kCVReturnInvalidPixelBufferAttributes: CVReturn = -6682
/// The buffer cannot be used with OpenGL.
public let kCVReturnPixelBufferNotOpenGLCompatible: CVReturn = -6683
/// The buffer cannot be used with Metal.
public let kCVReturnPixelBufferNotMetalCompatible: CVReturn = -6684
/// The allocation would exceed a pool's threshold.
public let kCVReturnWouldExceedAllocationThreshold: CVReturn = -6689
/// A pool allocation failed.
public let kCVReturnPoolAllocationFailed: CVReturn = -6690
/// A pool's attributes are invalid.
public let kCVReturnInvalidPoolAttributes: CVReturn = -6691
/// Try again.
public let kCVReturnRetry: CVReturn = -6692
/// The last error code.
public let kCVReturnLast: CVReturn = -6699

/// A four-character code, as Apple's `CoreServices` defines it (pixel format types).
/// **Linux stand-in** so pixel formats and `MLImageConstraint.pixelFormatType` have Apple's type.
///
/// ```swift
/// let format: OSType = 0x4247_5241   // 'BGRA', kCVPixelFormatType_32BGRA
/// ```
public typealias OSType = UInt32

// swift-format-ignore-file: AlwaysUseLowerCamelCase
// CoreVideo's C names, spelled as Apple spells them.

// CoreVideo's C functions over ``CVBuffer``, with Apple's names, argument labels and return
// codes. Each checks what CoreVideo checks and returns a `kCVReturn…` code instead of trapping.

/// Creates a zero-filled pixel buffer of a size and format.
///
/// ```swift
/// var buffer: CVPixelBuffer?
/// let status = CVPixelBufferCreate(kCFAllocatorDefault, 224, 224, kCVPixelFormatType_32BGRA, nil, &buffer)
/// ```
///
/// - Parameters:
///   - allocator: Ignored (pass `kCFAllocatorDefault` or `nil`).
///   - width: The width in pixels, at least 1.
///   - height: The height in pixels, at least 1.
///   - pixelFormatType: One of the `kCVPixelFormatType_…` constants this module defines.
///   - pixelBufferAttributes: Accepted and ignored.
///   - pixelBufferOut: Receives the buffer on success.
/// - Returns: `kCVReturnSuccess`, `kCVReturnInvalidSize` (zero, negative, or over 1 GiB),
///   `kCVReturnInvalidPixelFormat`, or `kCVReturnAllocationFailed`.
@discardableResult
public func CVPixelBufferCreate(
    _ allocator: CFAllocator?, _ width: Int, _ height: Int, _ pixelFormatType: OSType,
    _ pixelBufferAttributes: CFDictionary?, _ pixelBufferOut: UnsafeMutablePointer<CVPixelBuffer?>
) -> CVReturn {
    switch CVBuffer.allocate(width: width, height: height, pixelFormatType: pixelFormatType) {
    case .success(let buffer):
        pixelBufferOut.pointee = buffer
        return kCVReturnSuccess
    case .failure(let error):
        pixelBufferOut.pointee = nil
        return error.code
    }
}

/// Creates a pixel buffer over memory the caller owns (a packed, non-planar format).
///
/// The buffer reads and writes `baseAddress` in place; `releaseCallback` runs with
/// `releaseRefCon` and `baseAddress` when the buffer goes away.
///
/// ```swift
/// let bytes = UnsafeMutableRawPointer.allocate(byteCount: 4 * 8 * 8, alignment: 64)
/// var buffer: CVPixelBuffer?
/// CVPixelBufferCreateWithBytes(nil, 8, 8, kCVPixelFormatType_32BGRA, bytes, 32, nil, nil, nil, &buffer)
/// ```
///
/// - Returns: `kCVReturnSuccess`, `kCVReturnInvalidSize`, `kCVReturnInvalidPixelFormat`,
///   `kCVReturnUnsupported` (a planar format), or `kCVReturnInvalidArgument` (`bytesPerRow`
///   smaller than a row's pixels).
@discardableResult
public func CVPixelBufferCreateWithBytes(
    _ allocator: CFAllocator?, _ width: Int, _ height: Int, _ pixelFormatType: OSType,
    _ baseAddress: UnsafeMutableRawPointer, _ bytesPerRow: Int, _ releaseCallback: CVPixelBufferReleaseBytesCallback?,
    _ releaseRefCon: UnsafeMutableRawPointer?, _ pixelBufferAttributes: CFDictionary?,
    _ pixelBufferOut: UnsafeMutablePointer<CVPixelBuffer?>
) -> CVReturn {
    let result = CVBuffer.wrap(
        width: width, height: height, pixelFormatType: pixelFormatType, baseAddress: baseAddress,
        bytesPerRow: bytesPerRow, releaseCallback: releaseCallback, releaseRefCon: releaseRefCon)
    switch result {
    case .success(let buffer):
        pixelBufferOut.pointee = buffer
        return kCVReturnSuccess
    case .failure(let error):
        pixelBufferOut.pointee = nil
        return error.code
    }
}

/// Locks the base address (counted: each lock needs an unlock).
///
/// ```swift
/// CVPixelBufferLockBaseAddress(buffer, .readOnly)
/// defer { CVPixelBufferUnlockBaseAddress(buffer, .readOnly) }
/// ```
@discardableResult
public func CVPixelBufferLockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ lockFlags: CVPixelBufferLockFlags)
    -> CVReturn
{
    pixelBuffer.lock()
    return kCVReturnSuccess
}

/// Unlocks the base address; `kCVReturnError` when the buffer is not locked.
///
/// ```swift
/// CVPixelBufferUnlockBaseAddress(buffer, [])
/// ```
@discardableResult
public func CVPixelBufferUnlockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ unlockFlags: CVPixelBufferLockFlags)
    -> CVReturn
{
    pixelBuffer.unlock() ? kCVReturnSuccess : kCVReturnError
}

/// The address of the first pixel (of plane 0 for a planar format).
///
/// ```swift
/// let row0 = CVPixelBufferGetBaseAddress(buffer)!.assumingMemoryBound(to: UInt8.self)
/// ```
public func CVPixelBufferGetBaseAddress(_ pixelBuffer: CVPixelBuffer) -> UnsafeMutableRawPointer? {
    pixelBuffer.planes[0].baseAddress
}

/// The bytes from one row to the next (of plane 0 for a planar format); at least
/// width × bytes a pixel.
///
/// ```swift
/// let rowBytes = CVPixelBufferGetBytesPerRow(buffer)     // 256 for a 64-pixel-wide BGRA buffer
/// ```
public func CVPixelBufferGetBytesPerRow(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.planes[0].bytesPerRow }

/// The width in pixels.
///
/// ```swift
/// CVPixelBufferGetWidth(buffer)     // 224
/// ```
public func CVPixelBufferGetWidth(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.width }

/// The height in pixels.
///
/// ```swift
/// CVPixelBufferGetHeight(buffer)     // 224
/// ```
public func CVPixelBufferGetHeight(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.height }

/// The pixel format.
///
/// ```swift
/// CVPixelBufferGetPixelFormatType(buffer) == kCVPixelFormatType_32BGRA
/// ```
public func CVPixelBufferGetPixelFormatType(_ pixelBuffer: CVPixelBuffer) -> OSType { pixelBuffer.pixelFormatType }

/// The bytes the pixels span (every plane, with row padding).
///
/// ```swift
/// CVPixelBufferGetDataSize(buffer)
/// ```
public func CVPixelBufferGetDataSize(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.dataSize }

/// Whether the format has planes (the bi-planar 4:2:0 formats).
///
/// ```swift
/// CVPixelBufferIsPlanar(buffer)     // false for 32BGRA
/// ```
public func CVPixelBufferIsPlanar(_ pixelBuffer: CVPixelBuffer) -> Bool { pixelBuffer.planes.count > 1 }

/// The number of planes: 0 for a packed format (as CoreVideo answers), 2 for the bi-planar ones.
///
/// ```swift
/// CVPixelBufferGetPlaneCount(buffer)     // 2 for 420YpCbCr8BiPlanarFullRange
/// ```
public func CVPixelBufferGetPlaneCount(_ pixelBuffer: CVPixelBuffer) -> Int {
    pixelBuffer.planes.count > 1 ? pixelBuffer.planes.count : 0
}

/// The address of a plane's first pixel; `nil` for a packed buffer or a plane out of range.
///
/// ```swift
/// let luma = CVPixelBufferGetBaseAddressOfPlane(buffer, 0)
/// ```
public func CVPixelBufferGetBaseAddressOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int)
    -> UnsafeMutableRawPointer?
{
    plane(pixelBuffer, planeIndex)?.baseAddress
}

/// A plane's bytes from one row to the next; 0 for a packed buffer or a plane out of range.
///
/// ```swift
/// CVPixelBufferGetBytesPerRowOfPlane(buffer, 1)
/// ```
public func CVPixelBufferGetBytesPerRowOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    plane(pixelBuffer, planeIndex)?.bytesPerRow ?? 0
}

/// A plane's width in pixels (half the buffer's, rounded up, for the chroma plane); 0 when out
/// of range.
///
/// ```swift
/// CVPixelBufferGetWidthOfPlane(buffer, 1)     // 32 for a 63-pixel-wide 4:2:0 buffer
/// ```
public func CVPixelBufferGetWidthOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    plane(pixelBuffer, planeIndex)?.width ?? 0
}

/// A plane's height in pixels; 0 when out of range.
///
/// ```swift
/// CVPixelBufferGetHeightOfPlane(buffer, 0)     // the buffer's height
/// ```
public func CVPixelBufferGetHeightOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    plane(pixelBuffer, planeIndex)?.height ?? 0
}

/// A planar buffer's plane, or `nil`.
private func plane(_ pixelBuffer: CVPixelBuffer, _ index: Int) -> CVBuffer.Plane? {
    guard pixelBuffer.planes.count > 1, pixelBuffer.planes.indices.contains(index) else { return nil }
    return pixelBuffer.planes[index]
}

// swift-format-ignore-file: AlwaysUseLowerCamelCase
// CoreVideo's C names, spelled as Apple spells them.

import Foundation

// The few CoreFoundation names CoreVideo calls take. Linux's Foundation does not export them
// (its CoreFoundation module is internal), so code that writes
// `CVPixelBufferCreate(kCFAllocatorDefault, …, attributes as CFDictionary, &buffer)` needs these
// to compile unchanged. Do not import Linux's `CoreFoundation` module next to Tessera: its
// `CFAllocator` and `CFDictionary` would make these names ambiguous.

/// A memory allocator, as CoreFoundation names it. **Linux stand-in**: the pixel buffer
/// functions accept one and ignore it.
///
/// ```swift
/// CVPixelBufferCreate(kCFAllocatorDefault, 8, 8, kCVPixelFormatType_32BGRA, nil, &buffer)
/// ```
public final class CFAllocator: Sendable {
    private init() {}

    /// The one allocator value.
    static let shared = CFAllocator()
}

/// The default allocator (ignored by the stand-in's functions).
public let kCFAllocatorDefault: CFAllocator? = CFAllocator.shared

/// A dictionary, as CoreFoundation names it: **Linux stand-in**, the same type as `NSDictionary`
/// so `attributes as CFDictionary` compiles.
///
/// ```swift
/// let attributes = [kCVPixelBufferCGImageCompatibilityKey: kCFBooleanTrue] as CFDictionary
/// ```
public typealias CFDictionary = NSDictionary

/// CoreFoundation's `true`, as a number (the stand-in's attribute values). Apple's is an
/// implicitly unwrapped `CFBoolean!`; this one is not optional, so write `kCFBooleanTrue`, not
/// `kCFBooleanTrue!`.
public let kCFBooleanTrue: NSNumber = NSNumber(value: true)
/// CoreFoundation's `false`, as a number.
public let kCFBooleanFalse: NSNumber = NSNumber(value: false)

/// The attribute asking for a buffer CoreGraphics can draw from (accepted and ignored).
public let kCVPixelBufferCGImageCompatibilityKey = "CGImageCompatibility"
/// The attribute asking for a buffer a CoreGraphics bitmap context can draw into (ignored).
public let kCVPixelBufferCGBitmapContextCompatibilityKey = "CGBitmapContextCompatibility"
/// The attribute asking for an IOSurface-backed buffer (ignored: there is no IOSurface).
public let kCVPixelBufferIOSurfacePropertiesKey = "IOSurfaceProperties"
/// The attribute asking for a Metal-compatible buffer (ignored: there is no GPU).
public let kCVPixelBufferMetalCompatibilityKey = "MetalCompatibility"
/// The pixel format attribute (ignored by ``CVPixelBufferCreate(_:_:_:_:_:_:)``, which takes the
/// format as an argument).
public let kCVPixelBufferPixelFormatTypeKey = "PixelFormatType"
/// The width attribute (ignored).
public let kCVPixelBufferWidthKey = "Width"
/// The height attribute (ignored).
public let kCVPixelBufferHeightKey = "Height"

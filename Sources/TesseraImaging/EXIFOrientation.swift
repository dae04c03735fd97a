import Foundation

/// The EXIF orientation tag (0x0112): how to turn the stored pixels to show them upright.
///
/// Raw values are EXIF's (and `CGImagePropertyOrientation`'s): 1 up, 2 mirrored, 3 down,
/// 4 down-mirrored, 5 left-mirrored, 6 right (rotate 90° clockwise to view), 7 right-mirrored,
/// 8 left (rotate 90° counter-clockwise to view).
package enum EXIFOrientation: UInt16, Sendable, CaseIterable {
    case up = 1
    case upMirrored = 2
    case down = 3
    case downMirrored = 4
    case leftMirrored = 5
    case right = 6
    case rightMirrored = 7
    case left = 8

    /// The orientation in a JPEG's EXIF APP1 segment; `.up` when there is none or it is unreadable.
    package static func inJPEG(_ data: Data) -> EXIFOrientation {
        let bytes = [UInt8](data.prefix(1 << 20))
        var position = 2
        while position + 4 <= bytes.count, bytes[position] == 0xFF {
            let marker = bytes[position + 1]
            // Start of scan or end of image: no more metadata segments.
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            guard length >= 2, position + 2 + length <= bytes.count else { break }
            let body = position + 4
            if marker == 0xE1, length >= 8, Array(bytes[body..<body + 6]) == [0x45, 0x78, 0x69, 0x66, 0, 0] {
                return inTIFF(bytes[(body + 6)..<(position + 2 + length)]) ?? .up
            }
            position += 2 + length
        }
        return .up
    }

    /// The orientation in a PNG's `eXIf` chunk; `.up` when there is none or it is unreadable.
    package static func inPNG(_ data: Data) -> EXIFOrientation {
        let bytes = [UInt8](data)
        var position = 8
        while position + 12 <= bytes.count {
            let length = bytes[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            guard length >= 0, position + 12 + length <= bytes.count else { break }
            if type == "eXIf" { return inTIFF(bytes[(position + 8)..<(position + 8 + length)]) ?? .up }
            if type == "IDAT" || type == "IEND" { break }
            position += 12 + length
        }
        return .up
    }

    /// The orientation tag of a TIFF header's first directory.
    static func inTIFF(_ tiff: ArraySlice<UInt8>) -> EXIFOrientation? {
        let bytes = Array(tiff)
        guard bytes.count >= 8 else { return nil }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(little ? at : at + 2), let high = u16(little ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let directory = u32(4), let count = u16(directory) else { return nil }
        for entry in 0..<count {
            let at = directory + 2 + 12 * entry
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112, let type = u16(at + 2), type == 3, let value = u16(at + 8) {
                return EXIFOrientation(rawValue: UInt16(value))
            }
        }
        return nil
    }

    /// The image turned upright.
    package func applied(to image: PixelImage) -> PixelImage {
        if self == .up { return image }
        let width = image.width
        let height = image.height
        let channels = image.channels.rawValue
        let swaps = rawValue >= 5
        let outWidth = swaps ? height : width
        let outHeight = swaps ? width : height
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { destination in
                for y in 0..<outHeight {
                    for x in 0..<outWidth {
                        let (sx, sy) = sourcePixel(x: x, y: y, width: width, height: height)
                        let from = (sy * width + sx) * channels
                        let to = (y * outWidth + x) * channels
                        for c in 0..<channels { destination[to + c] = source[from + c] }
                    }
                }
            }
        }
        return PixelImage(width: outWidth, height: outHeight, channels: image.channels, pixels: out)
    }

    /// The stored pixel shown at upright position (x, y), for a stored image of width × height.
    private func sourcePixel(x: Int, y: Int, width: Int, height: Int) -> (Int, Int) {
        switch self {
        case .up: (x, y)
        case .upMirrored: (width - 1 - x, y)
        case .down: (width - 1 - x, height - 1 - y)
        case .downMirrored: (x, height - 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, height - 1 - x)
        case .rightMirrored: (width - 1 - y, height - 1 - x)
        case .left: (width - 1 - y, x)
        }
    }
}

import TesseraCoreVideo
import Testing

@Suite("CVPixelBuffer stand-in")
struct PixelBufferTests {
    @Test("CVPixelBufferCreate makes 64-byte aligned rows of the format's pixel size")
    func create() {
        var buffer: CVPixelBuffer?
        #expect(
            CVPixelBufferCreate(kCFAllocatorDefault, 17, 5, kCVPixelFormatType_32BGRA, nil, &buffer) == kCVReturnSuccess
        )
        let made = try! #require(buffer)
        #expect(CVPixelBufferGetWidth(made) == 17)
        #expect(CVPixelBufferGetHeight(made) == 5)
        #expect(CVPixelBufferGetBytesPerRow(made) == 128)
        #expect(CVPixelBufferGetPixelFormatType(made) == kCVPixelFormatType_32BGRA)
        #expect(CVPixelBufferGetPlaneCount(made) == 0)
        #expect(!CVPixelBufferIsPlanar(made))
        #expect(CVPixelBufferGetDataSize(made) == 128 * 5)
    }

    @Test("bad sizes and formats return CoreVideo's codes and leave the output nil")
    func badArguments() {
        var buffer: CVPixelBuffer?
        #expect(CVPixelBufferCreate(nil, 0, 5, kCVPixelFormatType_32BGRA, nil, &buffer) == kCVReturnInvalidSize)
        #expect(buffer == nil)
        #expect(CVPixelBufferCreate(nil, 4, 4, 0x1234_5678, nil, &buffer) == kCVReturnInvalidPixelFormat)
        #expect(
            CVPixelBufferCreate(nil, 100_000, 100_000, kCVPixelFormatType_32BGRA, nil, &buffer) == kCVReturnInvalidSize)
        #expect(buffer == nil)
    }

    @Test("bi-planar 4:2:0 buffers have a luma plane and a half-size interleaved chroma plane")
    func planes() throws {
        var buffer: CVPixelBuffer?
        #expect(
            CVPixelBufferCreate(nil, 63, 31, kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, nil, &buffer)
                == kCVReturnSuccess)
        let made = try #require(buffer)
        #expect(CVPixelBufferGetPlaneCount(made) == 2)
        #expect(CVPixelBufferGetWidthOfPlane(made, 0) == 63)
        #expect(CVPixelBufferGetWidthOfPlane(made, 1) == 32)
        #expect(CVPixelBufferGetHeightOfPlane(made, 1) == 16)
        #expect(CVPixelBufferGetBytesPerRowOfPlane(made, 1) >= 64)
        #expect(CVPixelBufferGetBaseAddressOfPlane(made, 2) == nil)
        #expect(CVPixelBufferGetBaseAddressOfPlane(made, 0) == CVPixelBufferGetBaseAddress(made))
    }

    @Test("lock and unlock are counted; an unlock without a lock fails")
    func locking() throws {
        var buffer: CVPixelBuffer?
        CVPixelBufferCreate(nil, 2, 2, kCVPixelFormatType_OneComponent8, nil, &buffer)
        let made = try #require(buffer)
        #expect(CVPixelBufferLockBaseAddress(made, .readOnly) == kCVReturnSuccess)
        #expect(CVPixelBufferUnlockBaseAddress(made, .readOnly) == kCVReturnSuccess)
        #expect(CVPixelBufferUnlockBaseAddress(made, []) == kCVReturnError)
    }

    @Test("CVPixelBufferCreateWithBytes reads the caller's memory in place and calls the release callback")
    func withBytes() throws {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 3 * 2 * 4, alignment: 16)
        for index in 0..<24 { bytes.storeBytes(of: UInt8(index), toByteOffset: index, as: UInt8.self) }
        let released = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        released.pointee = false
        do {
            var buffer: CVPixelBuffer?
            let status = CVPixelBufferCreateWithBytes(
                nil, 3, 2, kCVPixelFormatType_32RGBA, bytes, 12,
                { refCon, _ in
                    refCon!.assumingMemoryBound(to: Bool.self).pointee = true
                }, UnsafeMutableRawPointer(released), nil, &buffer)
            #expect(status == kCVReturnSuccess)
            let made = try #require(buffer)
            #expect(CVPixelBufferGetBaseAddress(made) == bytes)
            #expect(CVPixelBufferGetBytesPerRow(made) == 12)
            var tooNarrow: CVPixelBuffer?
            #expect(
                CVPixelBufferCreateWithBytes(nil, 3, 2, kCVPixelFormatType_32RGBA, bytes, 8, nil, nil, nil, &tooNarrow)
                    == kCVReturnInvalidArgument)
            buffer = nil
        }
        #expect(released.pointee)
        released.deallocate()
        bytes.deallocate()
    }
}

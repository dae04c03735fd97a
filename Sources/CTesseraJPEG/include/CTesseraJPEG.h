// A JPEG decoder over libjpeg-turbo (Debian: libjpeg62-turbo-dev). libjpeg reports errors by
// calling an error_exit hook that must not return, so the hook longjmps back here; Swift cannot
// do that itself. Warnings (for example "premature end of data", a truncated file) are errors
// too, so a damaged file is reported instead of decoded half grey; so is arithmetic-coded data
// that ends before the last row (which libjpeg does not warn about), and a file of more than 500
// scans.
#ifndef TESSERA_CTESSERAJPEG_H
#define TESSERA_CTESSERAJPEG_H
#include <stddef.h>
#include <stdint.h>

/// What a decode call found.
typedef enum {
    TESSERA_JPEG_OK = 0,
    /// The data is not a JPEG, or is corrupt or truncated; `message` says what libjpeg saw.
    TESSERA_JPEG_CORRUPT = 1,
    /// The declared size is zero or more than `max_pixels`.
    TESSERA_JPEG_BAD_SIZE = 2,
    /// The pixel memory could not be allocated.
    TESSERA_JPEG_NO_MEMORY = 3,
} tessera_jpeg_status;

/// Reads the header of a JPEG: its width and height and whether it has one channel.
tessera_jpeg_status tessera_jpeg_read_size(
    const uint8_t *data, size_t size, int *width, int *height, int *grayscale, char message[200]);

/// Decodes a JPEG into `out` (width * height * 3 bytes of RGB, or width * height bytes when
/// `grayscale`), with libjpeg's accurate integer IDCT and fancy upsampling. `width` and `height`
/// must be what tessera_jpeg_read_size returned and at most `max_pixels` in product.
tessera_jpeg_status tessera_jpeg_decode(
    const uint8_t *data, size_t size, int grayscale, uint8_t *out, size_t out_size, size_t max_pixels,
    char message[200]);
#endif

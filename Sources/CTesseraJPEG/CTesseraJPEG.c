#include "CTesseraJPEG.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

struct tessera_error_manager {
    struct jpeg_error_mgr base;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    char *message;
};

/// The most scans a progressive or multi-scan file may have. Each scan walks every coefficient
/// block of the image, so a small file with thousands of scans would take minutes; real encoders
/// write about ten (libjpeg-turbo's TurboJPEG API offers the same kind of limit).
enum { TESSERA_JPEG_MAX_SCANS = 500 };

static void tessera_error_exit(j_common_ptr info) {
    struct tessera_error_manager *manager = (struct tessera_error_manager *)info->err;
    (*info->err->format_message)(info, manager->message);
    longjmp(manager->jump, 1);
}

static void tessera_emit_message(j_common_ptr info, int level) {
    // level -1 is a warning: corrupt or truncated data that libjpeg would paper over.
    if (level < 0) tessera_error_exit(info);
}

static void tessera_output_message(j_common_ptr info) { (void)info; }

static void tessera_progress_monitor(j_common_ptr common) {
    j_decompress_ptr info = (j_decompress_ptr)common;
    if (info->input_scan_number > TESSERA_JPEG_MAX_SCANS) {
        struct tessera_error_manager *manager = (struct tessera_error_manager *)info->err;
        snprintf(manager->message, 200, "more than %d scans, which Tessera does not decode", TESSERA_JPEG_MAX_SCANS);
        longjmp(manager->jump, 1);
    }
}

/// Whether a single-scan decode ran out of entropy-coded data before its last row. Huffman
/// decoding warns when it meets a marker early (a warning is an error here), but arithmetic
/// decoding does not: it decodes every row that is left from zero bits, so a 183-byte file
/// declaring 28 million pixels would be decoded in full, all but the first rows grey. The
/// decoder meets the marker after the data (EOI) only while decoding the last iMCU row; a
/// restart marker (RST0-RST7) between intervals is normal.
static int tessera_entropy_data_ended_early(j_decompress_ptr info) {
    int marker = info->unread_marker;
    int restart = marker >= 0xD0 && marker <= 0xD7;
    return marker != 0 && !restart && info->input_iMCU_row < info->total_iMCU_rows;
}

static void tessera_setup(struct jpeg_decompress_struct *info, struct tessera_error_manager *manager,
                          char *message) {
    info->err = jpeg_std_error(&manager->base);
    manager->base.error_exit = tessera_error_exit;
    manager->base.emit_message = tessera_emit_message;
    manager->base.output_message = tessera_output_message;
    manager->message = message;
    manager->progress.progress_monitor = tessera_progress_monitor;
    message[0] = 0;
}

tessera_jpeg_status tessera_jpeg_read_size(const uint8_t *data, size_t size, int *width, int *height,
                                           int *grayscale, char message[200]) {
    struct jpeg_decompress_struct info;
    struct tessera_error_manager manager;
    tessera_setup(&info, &manager, message);
    if (setjmp(manager.jump)) {
        jpeg_destroy_decompress(&info);
        return TESSERA_JPEG_CORRUPT;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    *width = (int)info.image_width;
    *height = (int)info.image_height;
    *grayscale = info.num_components == 1;
    jpeg_destroy_decompress(&info);
    return TESSERA_JPEG_OK;
}

tessera_jpeg_status tessera_jpeg_decode(const uint8_t *data, size_t size, int grayscale, uint8_t *out,
                                        size_t out_size, size_t max_pixels, char message[200]) {
    struct jpeg_decompress_struct info;
    struct tessera_error_manager manager;
    tessera_setup(&info, &manager, message);
    if (setjmp(manager.jump)) {
        jpeg_destroy_decompress(&info);
        return TESSERA_JPEG_CORRUPT;
    }
    jpeg_create_decompress(&info);
    info.progress = &manager.progress;  // after jpeg_create_decompress, which clears the struct
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    size_t channels = grayscale ? 1 : 3;
    size_t pixels = (size_t)info.image_width * (size_t)info.image_height;
    if (pixels == 0 || pixels > max_pixels || pixels * channels > out_size) {
        jpeg_destroy_decompress(&info);
        snprintf(message, 200, "%ux%u", info.image_width, info.image_height);
        return TESSERA_JPEG_BAD_SIZE;
    }
    info.out_color_space = grayscale ? JCS_GRAYSCALE : JCS_RGB;
    info.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&info);
    int single_scan = !jpeg_has_multiple_scans(&info);
    size_t row_bytes = (size_t)info.output_width * channels;
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = out + (size_t)info.output_scanline * row_bytes;
        jpeg_read_scanlines(&info, &row, 1);
        if (single_scan && tessera_entropy_data_ended_early(&info)) {
            snprintf(message, 200, "the compressed data ends at row %u of %u", info.output_scanline,
                     info.output_height);
            jpeg_destroy_decompress(&info);
            return TESSERA_JPEG_CORRUPT;
        }
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return TESSERA_JPEG_OK;
}

#include "CJPEGWriter.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
} imago_jpeg_error;

// A growing memory destination whose buffer this file owns, so an error freeing it cannot leak
// (jpeg_mem_dest keeps its latest buffer where an error path cannot reach it).
typedef struct {
    struct jpeg_destination_mgr manager;
    uint8_t *buffer;
    size_t capacity;
} imago_jpeg_destination;

static void imago_jpeg_error_exit(j_common_ptr info) {
    imago_jpeg_error *error = (imago_jpeg_error *)info->err;
    longjmp(error->jump, 1);
}

// Warnings are not printed to stderr.
static void imago_jpeg_output_message(j_common_ptr info) { (void)info; }

static void imago_jpeg_init_destination(j_compress_ptr info) {
    imago_jpeg_destination *destination = (imago_jpeg_destination *)info->dest;
    destination->manager.next_output_byte = destination->buffer;
    destination->manager.free_in_buffer = destination->capacity;
}

static boolean imago_jpeg_empty_output_buffer(j_compress_ptr info) {
    imago_jpeg_destination *destination = (imago_jpeg_destination *)info->dest;
    size_t used = destination->capacity;
    size_t capacity = destination->capacity * 2;
    uint8_t *grown = realloc(destination->buffer, capacity);
    if (!grown) {
        // libjpeg's own out-of-memory code, through its error manager (jerror.h's ERREXIT1).
        info->err->msg_code = JERR_OUT_OF_MEMORY;
        info->err->msg_parm.i[0] = 10;
        (*info->err->error_exit)((j_common_ptr)info);
    }
    destination->buffer = grown;
    destination->capacity = capacity;
    destination->manager.next_output_byte = grown + used;
    destination->manager.free_in_buffer = capacity - used;
    return TRUE;
}

static void imago_jpeg_term_destination(j_compress_ptr info) { (void)info; }

int imago_jpeg_write(const uint8_t *rgba, int width, int height, size_t stride, imago_jpeg_settings settings,
                     uint8_t **output, unsigned long *output_size, char *message, size_t message_size) {
    struct jpeg_compress_struct info;
    imago_jpeg_error error;
    imago_jpeg_destination destination;
    *output = NULL;
    *output_size = 0;
    memset(&info, 0, sizeof info);
    memset(&destination, 0, sizeof destination);
    // A guess of the size (a tenth of the pixels' bytes, at least 16 KB); it doubles as needed.
    destination.capacity = (size_t)width * (size_t)height * 3 / 10 + 16384;
    destination.buffer = malloc(destination.capacity);
    if (!destination.buffer) {
        if (message && message_size > 0) snprintf(message, message_size, "out of memory");
        return -1;
    }
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = imago_jpeg_error_exit;
    error.manager.output_message = imago_jpeg_output_message;
    if (setjmp(error.jump)) {
        if (message && message_size > 0) {
            char text[JMSG_LENGTH_MAX];
            (*info.err->format_message)((j_common_ptr)&info, text);
            snprintf(message, message_size, "%s", text);
        }
        jpeg_destroy_compress(&info);
        free(destination.buffer);
        return -1;
    }
    jpeg_create_compress(&info);
    destination.manager.init_destination = imago_jpeg_init_destination;
    destination.manager.empty_output_buffer = imago_jpeg_empty_output_buffer;
    destination.manager.term_destination = imago_jpeg_term_destination;
    info.dest = &destination.manager;
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 4;
    info.in_color_space = JCS_EXT_RGBA;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, settings.quality, TRUE);
    if (settings.grayscale) jpeg_set_colorspace(&info, JCS_GRAYSCALE);
    // 4:2:0 is libjpeg's default for YCbCr; 4:4:4 sets every component to 1×1.
    if (settings.no_subsample) {
        for (int index = 0; index < info.num_components; index++) {
            info.comp_info[index].h_samp_factor = 1;
            info.comp_info[index].v_samp_factor = 1;
        }
    }
    // TurboJPEG's choice, kept so pixels match what Imago wrote through tjCompress2: the fast
    // integer DCT below quality 96, the accurate one from there.
    info.dct_method = settings.quality >= 96 ? JDCT_ISLOW : JDCT_IFAST;
    info.optimize_coding = settings.optimize_coding ? TRUE : FALSE;
    if (settings.progressive) jpeg_simple_progression(&info);
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(rgba + (size_t)info.next_scanline * stride);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    *output_size = (unsigned long)(destination.capacity - destination.manager.free_in_buffer);
    *output = destination.buffer;
    jpeg_destroy_compress(&info);
    return 0;
}

void imago_jpeg_free(uint8_t *output) { free(output); }

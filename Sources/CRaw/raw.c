#include "CRaw.h"
#include "raw_stream.h"

#include <libraw/libraw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct imago_raw {
    libraw_data_t *data;
    imago_raw_stream *stream;
    size_t size;
    imago_raw_limits limits;
    int timed_out;
    int unpacked;
    libraw_processed_image_t *developed;
};

static int64_t imago_raw_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

// LibRaw calls this at the start of each stage (and within its long demosaics): a past deadline
// cancels the work, which LibRaw then unwinds as LIBRAW_CANCELLED_BY_CALLBACK.
static int imago_raw_progress(void *context, enum LibRaw_progress stage, int iteration, int expected) {
    (void)stage, (void)iteration, (void)expected;
    imago_raw *raw = context;
    if (raw->limits.deadline_ns > 0 && imago_raw_now() > raw->limits.deadline_ns) {
        raw->timed_out = 1;
        return 1;
    }
    return 0;
}

static int imago_raw_fail(imago_raw *raw, int status, char *message, size_t capacity) {
    if (raw && (raw->timed_out || (raw->stream && imago_raw_stream_timed_out(raw->stream)))) {
        snprintf(message, capacity, "LibRaw stopped at the decode deadline");
        return IMAGO_RAW_TIMED_OUT;
    }
    if (status == LIBRAW_TOO_BIG) {
        snprintf(message, capacity, "the RAW file's data is larger than the decode may hold");
        return IMAGO_RAW_TOO_LARGE;
    }
    snprintf(message, capacity, "%s", libraw_strerror(status));
    return IMAGO_RAW_FAILED;
}

int imago_raw_open(imago_raw **out, const void *data, size_t size, const imago_raw_limits *limits, char *message, size_t capacity) {
    *out = NULL;
    imago_raw *raw = calloc(1, sizeof *raw);
    if (!raw) return imago_raw_fail(NULL, LIBRAW_UNSUFFICIENT_MEMORY, message, capacity);
    raw->limits = *limits;
    raw->size = size;
    // No callbacks that print: LibRaw's defaults write to stderr on bad data.
    raw->data = libraw_init(LIBRAW_OPIONS_NO_MEMERR_CALLBACK | LIBRAW_OPIONS_NO_DATAERR_CALLBACK);
    if (!raw->data) {
        free(raw);
        return imago_raw_fail(NULL, LIBRAW_UNSUFFICIENT_MEMORY, message, capacity);
    }
    libraw_set_progress_handler(raw->data, imago_raw_progress, raw);
    int64_t megabytes = limits->max_bytes > 0 ? limits->max_bytes >> 20 : 0;
    if (megabytes > 0) raw->data->params.max_raw_memory_mb = megabytes < 1 ? 1 : (unsigned)megabytes;
    // LibRaw's reads check the deadline too: a parser can loop without reaching a progress callback.
    raw->stream = imago_raw_stream_make(data, size, limits->deadline_ns);
    if (!raw->stream) {
        imago_raw_close(raw);
        return imago_raw_fail(NULL, LIBRAW_UNSUFFICIENT_MEMORY, message, capacity);
    }
    int status = imago_raw_stream_open(raw->data, raw->stream);
    if (status != LIBRAW_SUCCESS) {
        status = imago_raw_fail(raw, status, message, capacity);
        imago_raw_close(raw);
        return status;
    }
    const libraw_image_sizes_t *sizes = &raw->data->sizes;
    int64_t pixels = (int64_t)sizes->raw_width * sizes->raw_height;
    if (sizes->width == 0 || sizes->height == 0 || pixels == 0) {
        snprintf(message, capacity, "the RAW file declares no picture");
        imago_raw_close(raw);
        return IMAGO_RAW_FAILED;
    }
    if (limits->max_pixels > 0 && (pixels > limits->max_pixels || (int64_t)sizes->width * sizes->height > limits->max_pixels)) {
        snprintf(message, capacity, "the sensor's %dx%d is over the pixel limit", sizes->raw_width, sizes->raw_height);
        imago_raw_close(raw);
        return IMAGO_RAW_TOO_LARGE;
    }
    *out = raw;
    return 0;
}

void imago_raw_describe(imago_raw *raw, imago_raw_info *info) {
    memset(info, 0, sizeof *info);
    const libraw_data_t *data = raw->data;
    info->width = data->sizes.width;
    info->height = data->sizes.height;
    info->raw_width = data->sizes.raw_width;
    info->raw_height = data->sizes.raw_height;
    info->flip = data->sizes.flip;
    info->colors = data->idata.colors;
    info->is_dng = data->idata.dng_version != 0;
    // A preview longer than the file cannot be in it.
    const libraw_thumbnail_t *thumbnail = &data->thumbnail;
    if (thumbnail->tlength > 0 && (size_t)thumbnail->tlength <= raw->size) {
        info->has_preview = 1;
        info->preview_width = thumbnail->twidth;
        info->preview_height = thumbnail->theight;
        info->preview_length = thumbnail->tlength;
    }
    snprintf(info->make, sizeof info->make, "%s", data->idata.make);
    snprintf(info->model, sizeof info->model, "%s", data->idata.model);
    info->iso = data->other.iso_speed;
    info->shutter = data->other.shutter;
    info->aperture = data->other.aperture;
    info->focal_length = data->other.focal_len;
    info->timestamp = (int64_t)data->other.timestamp;
}

int imago_raw_preview(imago_raw *raw, const unsigned char **bytes, size_t *length, int32_t *format, int32_t *width, int32_t *height,
                      char *message, size_t capacity) {
    imago_raw_info info;
    imago_raw_describe(raw, &info);
    if (!info.has_preview) {
        snprintf(message, capacity, "the RAW file has no preview");
        return IMAGO_RAW_NO_PREVIEW;
    }
    int status = libraw_unpack_thumb(raw->data);
    if (status != LIBRAW_SUCCESS) return imago_raw_fail(raw, status, message, capacity);
    const libraw_thumbnail_t *thumbnail = &raw->data->thumbnail;
    if (!thumbnail->thumb || thumbnail->tlength == 0) {
        snprintf(message, capacity, "the RAW file's preview could not be read");
        return IMAGO_RAW_FAILED;
    }
    // Only what Imago reads: a JPEG, or 8-bit RGB of the size declared.
    if (thumbnail->tformat == LIBRAW_THUMBNAIL_JPEG) {
        *format = 1;
    } else if (thumbnail->tformat == LIBRAW_THUMBNAIL_BITMAP && thumbnail->twidth > 0 && thumbnail->theight > 0 &&
               (int64_t)thumbnail->tlength == (int64_t)thumbnail->twidth * thumbnail->theight * 3) {
        *format = 2;
    } else {
        snprintf(message, capacity, "the RAW file's preview is of a kind Imago does not read");
        return IMAGO_RAW_NO_PREVIEW;
    }
    *bytes = (const unsigned char *)thumbnail->thumb;
    *length = thumbnail->tlength;
    *width = thumbnail->twidth;
    *height = thumbnail->theight;
    return 0;
}

// Samples LibRaw keeps per sensor pixel: one for a mosaic, the colours for a linear file.
static int64_t imago_raw_samples(const libraw_data_t *data) {
    return data->idata.filters ? 1 : (data->idata.colors > 3 ? 4 : data->idata.colors < 1 ? 1 : 3);
}

int64_t imago_raw_develop_bytes(imago_raw *raw, int half) {
    const libraw_data_t *data = raw->data;
    int shrink = half && data->idata.filters ? 1 : 0;
    int64_t width = (data->sizes.width + shrink) >> shrink, height = (data->sizes.height + shrink) >> shrink;
    // The sensor's data as unpacked, the working image (four 16-bit samples a pixel) and its
    // copy while turning, and the 8-bit result; a pixel aspect other than 1 stretches by at most 2.
    int64_t sensor = (int64_t)data->sizes.raw_width * data->sizes.raw_height * 2 * imago_raw_samples(data);
    int64_t image = width * height * 8;
    return sensor + image * 2 * (data->sizes.pixel_aspect != 1 ? 2 : 1) + width * height * 3 * 2;
}

int imago_raw_develop(imago_raw *raw, int half, int turn, const unsigned char **rgb, int32_t *width, int32_t *height, char *message,
                      size_t capacity) {
    if (raw->developed) {
        snprintf(message, capacity, "the RAW file was developed already");
        return IMAGO_RAW_FAILED;
    }
    int64_t needed = imago_raw_develop_bytes(raw, half);
    if (raw->limits.max_bytes > 0 && needed > raw->limits.max_bytes) {
        snprintf(message, capacity, "developing the RAW file would hold %lld bytes, over %lld", (long long)needed,
                 (long long)raw->limits.max_bytes);
        return IMAGO_RAW_TOO_LARGE;
    }
    libraw_output_params_t *params = &raw->data->params;
    params->half_size = half ? 1 : 0;
    params->use_camera_wb = 1;
    params->output_color = 1;  // sRGB
    params->output_bps = 8;
    // sRGB's own curve (dcraw's default is BT.709's), so the pixels are the sRGB they are taken for.
    params->gamm[0] = 1 / 2.4;
    params->gamm[1] = 12.92;
    params->user_flip = turn ? -1 : 0;
    params->user_qual = 3;  // AHD, as dcraw_emu's default
    int status = raw->unpacked ? LIBRAW_SUCCESS : libraw_unpack(raw->data);
    if (status != LIBRAW_SUCCESS) return imago_raw_fail(raw, status, message, capacity);
    raw->unpacked = 1;
    status = libraw_dcraw_process(raw->data);
    if (status != LIBRAW_SUCCESS) return imago_raw_fail(raw, status, message, capacity);
    int error = 0;
    libraw_processed_image_t *image = libraw_dcraw_make_mem_image(raw->data, &error);
    if (!image) return imago_raw_fail(raw, error ? error : LIBRAW_UNSUFFICIENT_MEMORY, message, capacity);
    raw->developed = image;
    if (image->type != LIBRAW_IMAGE_BITMAP || image->colors != 3 || image->bits != 8 ||
        (int64_t)image->data_size < (int64_t)image->width * image->height * 3) {
        snprintf(message, capacity, "LibRaw made an image Imago does not read");
        return IMAGO_RAW_FAILED;
    }
    *rgb = image->data;
    *width = image->width;
    *height = image->height;
    return 0;
}

void imago_raw_close(imago_raw *raw) {
    if (!raw) return;
    if (raw->developed) libraw_dcraw_clear_mem(raw->developed);
    if (raw->data) libraw_close(raw->data);
    imago_raw_stream_free(raw->stream);
    free(raw);
}

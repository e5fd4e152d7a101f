// Video through FFmpeg's libavformat, libavcodec and libswscale (opened on first use: see
// CLazyLibraries): a poster frame at a second, scaled to RGBA, and what the file declares. Bytes
// come only through the caller's read function, so a file is read where it is (memory, a range
// request) and FFmpeg opens nothing else: no protocol, no file, no nested URL.
#ifndef IMAGO_CVIDEO_H
#define IMAGO_CVIDEO_H

#include <stddef.h>
#include <stdint.h>

/// Reads up to `size` bytes at `offset` into `buffer`: the count read, 0 at the end, -1 on failure.
typedef int (*imago_video_read_function)(void *context, uint8_t *buffer, int size, int64_t offset);

/// What a call may use. Zero means FFmpeg's default (probe size, analyse duration) or none (deadline).
typedef struct {
    /// Bytes of the file, or -1 when unknown.
    int64_t size;
    /// Bytes read to find the streams (FFmpeg's probesize; imgproxy's VIDEO_THUMBNAIL_PROBE_SIZE).
    int64_t probe_size;
    /// Microseconds of the streams analysed (FFmpeg's max_analyze_duration).
    int64_t max_analyze_duration;
    /// Pixels a frame may have: the decoder refuses a larger one (the caller checks the declared size).
    int64_t max_pixels;
    /// Packets of the video stream decoded to reach one frame (one GOP at most, as a rule).
    int64_t max_packets;
    /// CLOCK_MONOTONIC nanoseconds after which every call stops, inside FFmpeg too; 0 for none.
    int64_t deadline_ns;
    /// The demuxer to use, by FFmpeg's short name ("mov", "matroska", "avi"); it alone is allowed.
    const char *demuxer;
} imago_video_limits;

/// What the file and its video stream declare.
typedef struct {
    int width;
    int height;
    /// The sample aspect ratio (1:1 when the file says nothing).
    int sample_aspect_numerator;
    int sample_aspect_denominator;
    /// Clockwise degrees the picture is shown turned by (the display matrix): 0, 90, 180 or 270.
    int rotation;
    /// Seconds, or -1 when unknown.
    double duration;
    /// Frames a second (guessed as FFmpeg guesses it), or 0.
    double frame_rate;
    /// Frames the stream declares, or 0.
    int64_t frame_count;
    /// Bits a second of the whole file, or 0.
    int64_t bit_rate;
    int bits_per_sample;
    int has_alpha;
    /// FFmpeg's AVColorPrimaries, AVColorTransferCharacteristic, AVColorSpace and AVColorRange.
    int color_primaries;
    int color_transfer;
    int color_space;
    int color_range;
    int video_streams;
    int audio_streams;
    int stream_count;
    char codec[32];
    char pixel_format[32];
    char audio_codec[32];
    /// Mean seconds between the video stream's keyframes as its index lists them (MP4's sync
    /// samples, Matroska's cues), or 0 when the index holds fewer than two.
    double keyframe_interval;
} imago_video_info;

typedef struct imago_video imago_video;

/// The results other than 0.
enum {
    IMAGO_VIDEO_INVALID = -1,
    IMAGO_VIDEO_TOO_LARGE = -2,
    IMAGO_VIDEO_TIMED_OUT = -3,
    IMAGO_VIDEO_NO_VIDEO = -4,
    IMAGO_VIDEO_NO_DECODER = -5,
    IMAGO_VIDEO_NO_MEMORY = -6,
};

/// Opens a video read through `read(context, …)` and finds its video stream (its decoder, one
/// thread, is opened by the first imago_video_frame, after the caller has checked the declared
/// size). 0 and `*video` set, or one of the results above with `error` saying why.
/// `context` must stay valid until imago_video_close.
int imago_video_open(imago_video **video, imago_video_read_function read, void *context, const imago_video_limits *limits, char *error,
                     size_t error_size);

/// What `video` declares.
void imago_video_describe(const imago_video *video, imago_video_info *info);

/// Decodes the frame shown at `seconds` from the start (the first whose time is at or past it,
/// or the last frame when the video ends before it), or with `keyframes_only` the keyframe at or
/// before it, and writes it scaled to `width`×`height` RGBA (straight alpha, opaque when the
/// stream has none) at `rgba` with `stride` bytes a row, converted from the stream's matrix and
/// range. `shown_at` receives the frame's time in seconds. 0, or one of the results above.
int imago_video_frame(imago_video *video, double seconds, int keyframes_only, uint8_t *rgba, int width, int height, int stride,
                      double *shown_at, char *error, size_t error_size);

/// Frees everything `video` holds.
void imago_video_close(imago_video *video);

/// Sets the CLOCK_MONOTONIC nanoseconds after which FFmpeg is stopped (0 for none): a file opened
/// for one call and used by the next gets the next one's deadline.
void imago_video_set_deadline(imago_video *video, int64_t deadline_ns);

#endif

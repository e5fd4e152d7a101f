#include "CVideo.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct imago_video {
    AVFormatContext *format;
    AVIOContext *io;
    AVCodecContext *codec;
    AVPacket *packet;
    AVFrame *frame;
    AVFrame *last;
    int stream;
    imago_video_read_function read;
    void *context;
    int64_t size;
    int64_t position;
    int64_t max_packets;
    int64_t deadline_ns;
    int timed_out;
    // The caller's read function failed (a range that could not be fetched): no later byte is
    // trusted, and what was decoded before is not shown as if the file ended there.
    int read_failed;
    int opened;
    const AVCodec *decoder;
    int64_t max_pixels;
    // The time of the frame the last call returned (AV_NOPTS_VALUE before any), and whether that
    // call read to the end: a later frame close ahead is reached by decoding on, without a seek.
    int64_t returned_time;
    int drained;
};

// The buffer FFmpeg reads the file through; it may grow it for a large read.
enum { IMAGO_VIDEO_IO_BUFFER = 64 << 10 };
// The largest single allocation FFmpeg may make (av_max_alloc, process-wide): above an 8K frame's
// planes and packets, below anything a hostile header could ask for at once.
static const size_t imago_video_max_allocation = 256u << 20;

static int64_t imago_video_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int imago_video_past_deadline(imago_video *video) {
    if (video->deadline_ns && imago_video_now_ns() > video->deadline_ns) video->timed_out = 1;
    return video->timed_out;
}

// FFmpeg asks between its reads and inside its probing loops: nonzero stops the call.
static int imago_video_interrupt(void *opaque) {
    imago_video *video = opaque;
    return imago_video_past_deadline(video) || video->read_failed;
}

static int imago_video_io_read(void *opaque, uint8_t *buffer, int size) {
    imago_video *video = opaque;
    if (imago_video_past_deadline(video)) return AVERROR_EXIT;
    if (video->size >= 0 && video->position >= video->size) return AVERROR_EOF;
    if (video->read_failed) return AVERROR(EIO);
    int count = video->read(video->context, buffer, size, video->position);
    if (count < 0) {
        video->read_failed = 1;
        return AVERROR(EIO);
    }
    if (count == 0) return AVERROR_EOF;
    if (count > size) return AVERROR(EIO);
    video->position += count;
    return count;
}

static int64_t imago_video_io_seek(void *opaque, int64_t offset, int whence) {
    imago_video *video = opaque;
    whence &= ~AVSEEK_FORCE;
    if (whence == AVSEEK_SIZE) return video->size >= 0 ? video->size : AVERROR(ENOSYS);
    int64_t target;
    switch (whence) {
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = video->position + offset; break;
    case SEEK_END:
        if (video->size < 0) return AVERROR(ENOSYS);
        target = video->size + offset;
        break;
    default: return AVERROR(EINVAL);
    }
    if (target < 0 || (video->size >= 0 && target > video->size)) return AVERROR(EINVAL);
    video->position = target;
    return target;
}

// Demuxers that would open another file (an HLS playlist, a concat list, a QuickTime reference)
// get nothing: every byte comes through the caller's read function.
static int imago_video_refuse_open(struct AVFormatContext *format, AVIOContext **io, const char *url, int flags, AVDictionary **options) {
    (void)format, (void)io, (void)url, (void)flags, (void)options;
    return AVERROR(EPERM);
}

static pthread_once_t imago_video_once = PTHREAD_ONCE_INIT;
static void imago_video_set_up(void) {
    av_log_set_level(AV_LOG_QUIET);
    av_max_alloc(imago_video_max_allocation);
}

static int imago_video_fail(int result, int ffmpeg_error, const char *what, char *error, size_t error_size) {
    if (error && error_size) {
        if (ffmpeg_error) {
            char reason[128];
            av_strerror(ffmpeg_error, reason, sizeof reason);
            snprintf(error, error_size, "%s: %s", what, reason);
        } else {
            snprintf(error, error_size, "%s", what);
        }
    }
    return result;
}

// A failure of FFmpeg's, told apart: the deadline, memory, or bad data.
static int imago_video_ffmpeg_fail(imago_video *video, int ffmpeg_error, const char *what, char *error, size_t error_size) {
    if (video->timed_out || ffmpeg_error == AVERROR_EXIT) return imago_video_fail(IMAGO_VIDEO_TIMED_OUT, 0, "the deadline passed", error, error_size);
    if (ffmpeg_error == AVERROR(ENOMEM)) return imago_video_fail(IMAGO_VIDEO_NO_MEMORY, ffmpeg_error, what, error, error_size);
    return imago_video_fail(IMAGO_VIDEO_INVALID, ffmpeg_error, what, error, error_size);
}

int imago_video_open(imago_video **result, imago_video_read_function read, void *context, const imago_video_limits *limits, char *error,
                     size_t error_size) {
    pthread_once(&imago_video_once, imago_video_set_up);
    *result = NULL;
    imago_video *video = av_mallocz(sizeof *video);
    if (!video) return imago_video_fail(IMAGO_VIDEO_NO_MEMORY, 0, "no memory", error, error_size);
    video->read = read;
    video->context = context;
    video->size = limits->size;
    video->max_packets = limits->max_packets > 0 ? limits->max_packets : 1000;
    video->deadline_ns = limits->deadline_ns;
    video->stream = -1;
    video->returned_time = AV_NOPTS_VALUE;

    int status = IMAGO_VIDEO_NO_MEMORY, code = 0;
    const char *what = "no memory";
    uint8_t *buffer = av_malloc(IMAGO_VIDEO_IO_BUFFER);
    video->format = avformat_alloc_context();
    if (!buffer || !video->format) goto fail;
    video->io = avio_alloc_context(buffer, IMAGO_VIDEO_IO_BUFFER, 0, video, imago_video_io_read, NULL, imago_video_io_seek);
    if (!video->io) goto fail;
    buffer = NULL;
    video->format->pb = video->io;
    video->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    video->format->interrupt_callback.callback = imago_video_interrupt;
    video->format->interrupt_callback.opaque = video;
    video->format->io_open = imago_video_refuse_open;
    if (limits->probe_size > 0) video->format->probesize = limits->probe_size;
    if (limits->max_analyze_duration > 0) video->format->max_analyze_duration = limits->max_analyze_duration;

    const AVInputFormat *demuxer = limits->demuxer ? av_find_input_format(limits->demuxer) : NULL;
    if (!demuxer) {
        status = IMAGO_VIDEO_INVALID;
        what = "no such demuxer";
        goto fail;
    }
    AVDictionary *options = NULL;
    av_dict_set(&options, "format_whitelist", demuxer->name, 0);
    av_dict_set(&options, "protocol_whitelist", "none", 0);
    // avformat_open_input frees the context when it fails.
    code = avformat_open_input(&video->format, NULL, demuxer, &options);
    av_dict_free(&options);
    video->opened = code >= 0;
    if (code < 0) {
        video->format = NULL;
        status = imago_video_ffmpeg_fail(video, code, "not a video FFmpeg reads", error, error_size);
        imago_video_close(video);
        return status;
    }
    code = avformat_find_stream_info(video->format, NULL);
    if (code < 0) {
        status = imago_video_ffmpeg_fail(video, code, "its streams could not be read", error, error_size);
        imago_video_close(video);
        return status;
    }

    const AVCodec *decoder = NULL;
    for (unsigned index = 0; index < video->format->nb_streams; index++) {
        // A cover picture stored as a stream (MP4's and Matroska's attached pictures) is not the video.
        if (video->format->streams[index]->disposition & AV_DISPOSITION_ATTACHED_PIC) video->format->streams[index]->discard = AVDISCARD_ALL;
    }
    video->stream = av_find_best_stream(video->format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (video->stream == AVERROR_STREAM_NOT_FOUND || (video->stream >= 0 && (video->format->streams[video->stream]->disposition & AV_DISPOSITION_ATTACHED_PIC))) {
        imago_video_close(video);
        return imago_video_fail(IMAGO_VIDEO_NO_VIDEO, 0, "the file has no video stream", error, error_size);
    }
    if (video->stream < 0) {
        imago_video_close(video);
        return imago_video_fail(IMAGO_VIDEO_NO_DECODER, 0, "no decoder for its video stream", error, error_size);
    }
    for (unsigned index = 0; index < video->format->nb_streams; index++) {
        if ((int)index != video->stream) video->format->streams[index]->discard = AVDISCARD_ALL;
    }
    AVCodecParameters *parameters = video->format->streams[video->stream]->codecpar;
    if (parameters->width <= 0 || parameters->height <= 0) {
        imago_video_close(video);
        return imago_video_fail(IMAGO_VIDEO_INVALID, 0, "its video stream declares no size", error, error_size);
    }
    video->decoder = decoder;
    video->max_pixels = limits->max_pixels;
    *result = video;
    return 0;

fail:
    av_free(buffer);
    status = imago_video_fail(status, code, what, error, error_size);
    imago_video_close(video);
    return status;
}

static void imago_video_copy_name(char *to, size_t size, const char *name) { snprintf(to, size, "%s", name ? name : ""); }

void imago_video_describe(const imago_video *video, imago_video_info *info) {
    memset(info, 0, sizeof *info);
    const AVStream *stream = video->format->streams[video->stream];
    const AVCodecParameters *parameters = stream->codecpar;
    info->width = parameters->width;
    info->height = parameters->height;
    AVRational aspect = av_guess_sample_aspect_ratio(video->format, (AVStream *)stream, NULL);
    if (aspect.num > 0 && aspect.den > 0) {
        info->sample_aspect_numerator = aspect.num;
        info->sample_aspect_denominator = aspect.den;
    } else {
        info->sample_aspect_numerator = info->sample_aspect_denominator = 1;
    }
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix && size >= 9 * sizeof(int32_t)) {
        // As FFmpeg's own tool turns a picture: counter-clockwise degrees negated, to a quarter.
        double degrees = -av_display_rotation_get((const int32_t *)matrix);
        if (isfinite(degrees)) {
            long quarter = lround(degrees / 90.0);
            info->rotation = (int)(((quarter % 4) + 4) % 4) * 90;
        }
    }
    if (video->format->duration != AV_NOPTS_VALUE && video->format->duration > 0) {
        info->duration = (double)video->format->duration / AV_TIME_BASE;
    } else if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
        info->duration = stream->duration * av_q2d(stream->time_base);
    } else {
        info->duration = -1;
    }
    AVRational rate = av_guess_frame_rate(video->format, (AVStream *)stream, NULL);
    info->frame_rate = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
    info->frame_count = stream->nb_frames > 0 ? stream->nb_frames : 0;
    info->bit_rate = video->format->bit_rate > 0 ? video->format->bit_rate : 0;
    const AVPixFmtDescriptor *descriptor = av_pix_fmt_desc_get(parameters->format);
    if (descriptor) {
        info->bits_per_sample = descriptor->comp[0].depth;
        info->has_alpha = (descriptor->flags & AV_PIX_FMT_FLAG_ALPHA) != 0;
        imago_video_copy_name(info->pixel_format, sizeof info->pixel_format, descriptor->name);
    }
    info->color_primaries = parameters->color_primaries;
    info->color_transfer = parameters->color_trc;
    info->color_space = parameters->color_space;
    info->color_range = parameters->color_range;
    imago_video_copy_name(info->codec, sizeof info->codec, avcodec_get_name(parameters->codec_id));
    info->stream_count = (int)video->format->nb_streams;
    // The index's first keyframes (a few thousand at most: what the demuxer already read).
    int entries = avformat_index_get_entries_count(stream), keyframes = 0;
    int64_t first = 0, last = 0;
    for (int index = 0; index < entries && index < 100000 && keyframes < 1000; index++) {
        const AVIndexEntry *entry = avformat_index_get_entry((AVStream *)stream, index);
        if (!entry || !(entry->flags & AVINDEX_KEYFRAME) || entry->timestamp == AV_NOPTS_VALUE) continue;
        if (keyframes == 0) first = entry->timestamp;
        last = entry->timestamp;
        keyframes++;
    }
    if (keyframes >= 2 && last > first) info->keyframe_interval = (double)(last - first) * av_q2d(stream->time_base) / (keyframes - 1);
    for (unsigned index = 0; index < video->format->nb_streams; index++) {
        const AVCodecParameters *other = video->format->streams[index]->codecpar;
        if (other->codec_type == AVMEDIA_TYPE_VIDEO) info->video_streams += 1;
        if (other->codec_type == AVMEDIA_TYPE_AUDIO) {
            if (info->audio_streams == 0) imago_video_copy_name(info->audio_codec, sizeof info->audio_codec, avcodec_get_name(other->codec_id));
            info->audio_streams += 1;
        }
    }
}

// swscale's coefficients for the stream's matrix; unspecified is BT.601, as FFmpeg's own scaler takes it.
static int imago_video_sws_matrix(int color_space) {
    switch (color_space) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    default: return SWS_CS_ITU601;
    }
}

static int imago_video_convert(imago_video *video, const AVFrame *frame, uint8_t *rgba, int width, int height, int stride, char *error,
                               size_t error_size) {
    if (frame->width <= 0 || frame->height <= 0 || frame->format < 0) return imago_video_fail(IMAGO_VIDEO_INVALID, 0, "a frame without pixels", error, error_size);
    struct SwsContext *scaler = sws_getContext(frame->width, frame->height, frame->format, width, height, AV_PIX_FMT_RGBA,
                                               SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
    if (!scaler) return imago_video_fail(IMAGO_VIDEO_INVALID, 0, "its pixel format cannot be converted", error, error_size);
    int color_space = frame->colorspace != AVCOL_SPC_UNSPECIFIED ? (int)frame->colorspace : video->codec->colorspace;
    int full_range = (frame->color_range == AVCOL_RANGE_JPEG) || (frame->color_range == AVCOL_RANGE_UNSPECIFIED && video->codec->color_range == AVCOL_RANGE_JPEG);
    const int *matrix = sws_getCoefficients(imago_video_sws_matrix(color_space));
    // Brightness 0, contrast and saturation 1.0 in 16.16.
    sws_setColorspaceDetails(scaler, matrix, full_range, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
    uint8_t *planes[4] = {rgba, NULL, NULL, NULL};
    int strides[4] = {stride, 0, 0, 0};
    int rows = sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides);
    sws_freeContext(scaler);
    if (rows != height) return imago_video_fail(IMAGO_VIDEO_INVALID, 0, "its frame could not be converted", error, error_size);
    return 0;
}

// The decoder is opened by the first frame asked for, after the caller has checked the declared size.
static int imago_video_open_decoder(imago_video *video, char *error, size_t error_size) {
    if (video->codec) return 0;
    AVCodecParameters *parameters = video->format->streams[video->stream]->codecpar;
    video->codec = avcodec_alloc_context3(video->decoder);
    video->packet = av_packet_alloc();
    video->frame = av_frame_alloc();
    video->last = av_frame_alloc();
    if (!video->codec || !video->packet || !video->frame || !video->last) return imago_video_fail(IMAGO_VIDEO_NO_MEMORY, 0, "no memory", error, error_size);
    int code = avcodec_parameters_to_context(video->codec, parameters);
    if (code >= 0) {
        // One thread: a decode's memory is its reference frames, not a frame per thread as well.
        video->codec->thread_count = 1;
        if (video->max_pixels > 0) video->codec->max_pixels = video->max_pixels;
        video->codec->pkt_timebase = video->format->streams[video->stream]->time_base;
        code = avcodec_open2(video->codec, video->decoder, NULL);
    }
    if (code < 0) {
        avcodec_free_context(&video->codec);
        return imago_video_ffmpeg_fail(video, code, "its decoder could not open", error, error_size);
    }
    return 0;
}

int imago_video_frame(imago_video *video, double seconds, int keyframes_only, uint8_t *rgba, int width, int height, int stride,
                      double *shown_at, char *error, size_t error_size) {
    if (width <= 0 || height <= 0 || stride < width * 4 || !isfinite(seconds) || seconds < 0)
        return imago_video_fail(IMAGO_VIDEO_INVALID, 0, "bad arguments", error, error_size);
    int opened = imago_video_open_decoder(video, error, error_size);
    if (opened != 0) return opened;
    AVStream *stream = video->format->streams[video->stream];
    if (stream->time_base.num <= 0 || stream->time_base.den <= 0) return imago_video_fail(IMAGO_VIDEO_INVALID, 0, "no time base", error, error_size);
    int64_t start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    double ticks = seconds / av_q2d(stream->time_base);
    if (ticks > (double)(INT64_MAX / 2)) ticks = (double)(INT64_MAX / 2);
    int64_t target = start + (int64_t)llround(ticks);
    // A frame up to this far ahead of the last one returned is reached by decoding on (a sprite's
    // or an animation's next frame); anything else seeks.
    const double continuation_seconds = 5;
    int continues = !keyframes_only && video->returned_time != AV_NOPTS_VALUE && !video->drained && target > video->returned_time &&
                    (double)(target - video->returned_time) * av_q2d(stream->time_base) <= continuation_seconds;
    int fresh = video->returned_time == AV_NOPTS_VALUE && !video->drained;
    if (!continues && !(fresh && seconds == 0 && !keyframes_only)) {
        // To the keyframe at or before the target, then forward; a stream that cannot seek is read from its start.
        if (av_seek_frame(video->format, video->stream, target, AVSEEK_FLAG_BACKWARD) < 0) {
            if (imago_video_past_deadline(video)) return imago_video_fail(IMAGO_VIDEO_TIMED_OUT, 0, "the deadline passed", error, error_size);
            av_seek_frame(video->format, -1, 0, AVSEEK_FLAG_BYTE);
        }
        avcodec_flush_buffers(video->codec);
        video->drained = 0;
    }
    video->codec->skip_frame = keyframes_only ? AVDISCARD_NONKEY : AVDISCARD_DEFAULT;
    av_frame_unref(video->last);

    int64_t packets = 0;
    int draining = 0, found = 0, code = 0;
    while (!found) {
        if (imago_video_past_deadline(video)) return imago_video_fail(IMAGO_VIDEO_TIMED_OUT, 0, "the deadline passed", error, error_size);
        if (!draining) {
            code = av_read_frame(video->format, video->packet);
            if (code == AVERROR_EOF || (code < 0 && code != AVERROR(EAGAIN) && !video->timed_out && !video->read_failed && code != AVERROR(ENOMEM))) {
                // The end, or bytes past a damaged part: what was decoded so far is shown.
                draining = 1;
                code = avcodec_send_packet(video->codec, NULL);
            } else if (code < 0) {
                return imago_video_ffmpeg_fail(video, code, "its packets could not be read", error, error_size);
            } else if (video->packet->stream_index != video->stream) {
                av_packet_unref(video->packet);
                continue;
            } else {
                if (++packets > video->max_packets) {
                    av_packet_unref(video->packet);
                    return imago_video_fail(IMAGO_VIDEO_TOO_LARGE, 0, "no frame within the packet limit", error, error_size);
                }
                code = avcodec_send_packet(video->codec, video->packet);
                av_packet_unref(video->packet);
                // A damaged packet is skipped, as players do; the deadline and memory are not.
                if (code < 0 && code != AVERROR(EAGAIN)) {
                    if (video->timed_out || code == AVERROR(ENOMEM)) return imago_video_ffmpeg_fail(video, code, "its frames could not be decoded", error, error_size);
                    continue;
                }
            }
        }
        for (;;) {
            code = avcodec_receive_frame(video->codec, video->frame);
            if (code == AVERROR(EAGAIN)) break;
            if (code == AVERROR_EOF) break;
            if (code < 0) {
                if (code == AVERROR(ENOMEM)) return imago_video_ffmpeg_fail(video, code, "its frames could not be decoded", error, error_size);
                break;
            }
            int64_t time = video->frame->best_effort_timestamp;
            int reached = keyframes_only || (time != AV_NOPTS_VALUE && time >= target);
            av_frame_unref(video->last);
            av_frame_move_ref(video->last, video->frame);
            if (reached) {
                found = 1;
                break;
            }
        }
        if (draining && !found) break;
    }
    video->drained = draining;
    if (!video->last->buf[0]) return imago_video_fail(IMAGO_VIDEO_INVALID, 0, "no frame could be decoded", error, error_size);
    int64_t time = video->last->best_effort_timestamp;
    video->returned_time = time != AV_NOPTS_VALUE ? time : target;
    if (shown_at) *shown_at = time != AV_NOPTS_VALUE ? (double)(time - start) * av_q2d(stream->time_base) : seconds;
    return imago_video_convert(video, video->last, rgba, width, height, stride, error, error_size);
}

void imago_video_close(imago_video *video) {
    if (!video) return;
    av_frame_free(&video->frame);
    av_frame_free(&video->last);
    av_packet_free(&video->packet);
    avcodec_free_context(&video->codec);
    if (video->format && video->opened) avformat_close_input(&video->format);
    else avformat_free_context(video->format);
    if (video->io) {
        av_freep(&video->io->buffer);
        avio_context_free(&video->io);
    }
    av_free(video);
}

void imago_video_set_deadline(imago_video *video, int64_t deadline_ns) {
    video->deadline_ns = deadline_ns;
    video->timed_out = 0;
}

// Imago's datastream for LibRaw (raw_stream.cpp): LibRaw's buffer datastream over the caller's
// bytes, whose reads check the decode's deadline. Private to CRaw.
#ifndef IMAGO_RAW_STREAM_H
#define IMAGO_RAW_STREAM_H

#include <libraw/libraw.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imago_raw_stream imago_raw_stream;

/// A stream over `size` bytes at `bytes` (kept alive by the caller) that stops LibRaw once
/// CLOCK_MONOTONIC passes `deadline_ns` (0: never); NULL when out of memory.
imago_raw_stream *imago_raw_stream_make(const void *bytes, size_t size, int64_t deadline_ns);

/// LibRaw's open over the stream (its open_datastream): a LibRaw status.
int imago_raw_stream_open(libraw_data_t *data, imago_raw_stream *stream);

/// Whether the stream stopped LibRaw at the deadline.
int imago_raw_stream_timed_out(const imago_raw_stream *stream);

/// Frees the stream, after libraw_close (LibRaw reads through it until then).
void imago_raw_stream_free(imago_raw_stream *stream);

#ifdef __cplusplus
}
#endif

#endif

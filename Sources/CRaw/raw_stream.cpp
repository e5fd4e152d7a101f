// LibRaw reads every byte through a datastream object. Imago's is LibRaw's own buffer datastream
// whose read, seek, get_char and gets first check the decode's deadline and, once past it, throw
// LibRaw's cancellation, which its open, unpack and thumbnail calls catch and return as
// LIBRAW_CANCELLED_BY_CALLBACK. This stops a parser that loops without reaching a stage's
// progress callback (a CR3 box whose 64-bit size is 0 makes LibRaw 0.20's open loop forever).
//
// The class cannot be derived from here: LibRaw is opened with dlopen (CLazyLibraries), and a
// derived class's type information refers to its base's, a data symbol the link cannot see. So
// the object is made by LibRaw's own constructor and its virtual table pointer is set to a copy
// of LibRaw's table in which those four entries are the functions below. Under the Itanium C++
// ABI (Linux on x86-64 and ARM64) the table is an array of function pointers whose index the
// compiler gives as a virtual member pointer's value, and a member function takes `this` first.
#include "raw_stream.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

namespace {

constexpr size_t table_size = 64;  // LibRaw 0.20's datastream has 17 virtual functions

}  // namespace

struct imago_raw_stream {
    // First, so that LibRaw's `this` is the stream's own address.
    alignas(LibRaw_buffer_datastream) unsigned char object[sizeof(LibRaw_buffer_datastream)];
    // Offset to top and type information, then the functions (the object points after the two).
    void *table[table_size + 2];
    void *const *original;
    int64_t deadline_ns;
    unsigned calls;
    int timed_out;
};

namespace {

using read_function = int (*)(void *, void *, size_t, size_t);
using seek_function = int (*)(void *, INT64, int);
using get_char_function = int (*)(void *);
using gets_function = char *(*)(void *, char *, int);
using destructor_function = void (*)(void *);

// The virtual table index of a member function, from the compiler's own virtual member pointer:
// its first word is the entry's byte offset, plus 1 on x86-64 (on ARM the flag is in the second).
template <typename Member> size_t table_index(Member member) {
    ptrdiff_t value;
    static_assert(sizeof member >= sizeof value, "a member pointer holds an offset");
    std::memcpy(&value, &member, sizeof value);
#if defined(__aarch64__) || defined(__arm__)
    return (size_t)value / sizeof(void *);
#else
    return (size_t)(value - 1) / sizeof(void *);
#endif
}

int64_t monotonic_now() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

// Past the deadline: LibRaw's cancellation, thrown into LibRaw's own handlers. The clock is read
// every 64 calls (get_char is called per byte by some of LibRaw's decoders).
void check(imago_raw_stream *stream) {
    if (stream->timed_out) throw LIBRAW_EXCEPTION_CANCELLED_BY_CALLBACK;
    if (stream->deadline_ns <= 0 || (++stream->calls & 63) != 0) return;
    if (monotonic_now() > stream->deadline_ns) {
        stream->timed_out = 1;
        throw LIBRAW_EXCEPTION_CANCELLED_BY_CALLBACK;
    }
}

imago_raw_stream *owner(void *self) { return static_cast<imago_raw_stream *>(self); }

size_t read_index() { return table_index(&LibRaw_buffer_datastream::read); }
size_t seek_index() { return table_index(&LibRaw_buffer_datastream::seek); }
size_t get_char_index() { return table_index(&LibRaw_buffer_datastream::get_char); }
size_t gets_index() { return table_index(&LibRaw_buffer_datastream::gets); }

int checked_read(void *self, void *buffer, size_t size, size_t count) {
    check(owner(self));
    return reinterpret_cast<read_function>(owner(self)->original[read_index()])(self, buffer, size, count);
}

int checked_seek(void *self, INT64 offset, int whence) {
    check(owner(self));
    return reinterpret_cast<seek_function>(owner(self)->original[seek_index()])(self, offset, whence);
}

int checked_get_char(void *self) {
    check(owner(self));
    return reinterpret_cast<get_char_function>(owner(self)->original[get_char_index()])(self);
}

char *checked_gets(void *self, char *line, int size) {
    check(owner(self));
    return reinterpret_cast<gets_function>(owner(self)->original[gets_index()])(self, line, size);
}

}  // namespace

extern "C" imago_raw_stream *imago_raw_stream_make(const void *bytes, size_t size, int64_t deadline_ns) {
    size_t highest = read_index();
    for (size_t index : {seek_index(), get_char_index(), gets_index()}) highest = index > highest ? index : highest;
    if (highest >= table_size) return nullptr;
    auto *stream = static_cast<imago_raw_stream *>(std::calloc(1, sizeof(imago_raw_stream)));
    if (!stream) return nullptr;
    stream->deadline_ns = deadline_ns;
    try {
        new (stream->object) LibRaw_buffer_datastream(const_cast<void *>(bytes), size);
    } catch (...) {
        std::free(stream);
        return nullptr;
    }
    // LibRaw's table, copied with the two words before it; then the object points at the copy.
    void *const *original;
    std::memcpy(&original, stream->object, sizeof original);
    stream->original = original;
    std::memcpy(stream->table, original - 2, sizeof stream->table);
    void **functions = stream->table + 2;
    functions[read_index()] = reinterpret_cast<void *>(&checked_read);
    functions[seek_index()] = reinterpret_cast<void *>(&checked_seek);
    functions[get_char_index()] = reinterpret_cast<void *>(&checked_get_char);
    functions[gets_index()] = reinterpret_cast<void *>(&checked_gets);
    std::memcpy(stream->object, &functions, sizeof functions);
    return stream;
}

extern "C" int imago_raw_stream_open(libraw_data_t *data, imago_raw_stream *stream) {
    try {
        return static_cast<LibRaw *>(data->parent_class)->open_datastream(reinterpret_cast<LibRaw_abstract_datastream *>(stream->object));
    } catch (...) {
        return stream->timed_out ? LIBRAW_CANCELLED_BY_CALLBACK : LIBRAW_UNSPECIFIED_ERROR;
    }
}

extern "C" int imago_raw_stream_timed_out(const imago_raw_stream *stream) { return stream->timed_out; }

extern "C" void imago_raw_stream_free(imago_raw_stream *stream) {
    if (!stream) return;
    // LibRaw's own table back, then its complete-object destructor (the table's first function).
    std::memcpy(stream->object, &stream->original, sizeof stream->original);
    reinterpret_cast<destructor_function>(stream->original[0])(stream->object);
    std::free(stream);
}

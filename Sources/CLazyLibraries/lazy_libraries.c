#include "CLazyLibraries.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One pointer per function, hidden so the dynamic linker never sees these names as the
// executable's: the library's own internal calls stay inside the library.
#define IMAGO_LAZY_LIBRARY(id, soname, variable)
#define IMAGO_LAZY_SYMBOL(id, name) __attribute__((visibility("hidden"))) void *imago_lazy_pointer_##name;
#include "lazy_symbols.h"
#undef IMAGO_LAZY_LIBRARY
#undef IMAGO_LAZY_SYMBOL

// The functions themselves: a jump through the pointer. Arguments (and, for variadic functions,
// %al) are untouched, so any signature passes through. Callers check imago_lazy_load first.
#if defined(__x86_64__)
#define IMAGO_LAZY_TRAMPOLINE(name)                                                                                     \
    __asm__(".text\n.globl " #name "\n.hidden " #name "\n.type " #name ",@function\n.p2align 4\n" #name ":\n"         \
            "jmp *imago_lazy_pointer_" #name "(%rip)\n.size " #name ", .-" #name "\n");
#else
#define IMAGO_LAZY_TRAMPOLINE(name)                                                                                     \
    __asm__(".text\n.globl " #name "\n.hidden " #name "\n.type " #name ",%function\n.p2align 2\n" #name ":\n"         \
            "adrp x16, imago_lazy_pointer_" #name "\nldr x16, [x16, #:lo12:imago_lazy_pointer_" #name "]\nbr x16\n"      \
            ".size " #name ", .-" #name "\n");
#endif
#define IMAGO_LAZY_LIBRARY(id, soname, variable)
#define IMAGO_LAZY_SYMBOL(id, name) IMAGO_LAZY_TRAMPOLINE(name)
#include "lazy_symbols.h"
#undef IMAGO_LAZY_LIBRARY
#undef IMAGO_LAZY_SYMBOL

typedef struct {
    const char *soname;
    const char *variable;
    pthread_once_t once;
    int loaded;
    char error[512];
} imago_lazy_state;

// The id token of the list to the enum.
#define IMAGO_LAZY_INDEX_jxl IMAGO_LAZY_JXL
#define IMAGO_LAZY_INDEX_heif IMAGO_LAZY_HEIF
#define IMAGO_LAZY_INDEX_avif IMAGO_LAZY_AVIF
#define IMAGO_LAZY_INDEX_tiff IMAGO_LAZY_TIFF
#define IMAGO_LAZY_INDEX_rsvg IMAGO_LAZY_RSVG
#define IMAGO_LAZY_INDEX_avformat IMAGO_LAZY_AVFORMAT
#define IMAGO_LAZY_INDEX_swscale IMAGO_LAZY_SWSCALE
#define IMAGO_LAZY_INDEX_raw IMAGO_LAZY_RAW
#define IMAGO_LAZY_COUNT 8

static imago_lazy_state imago_lazy_states[IMAGO_LAZY_COUNT] = {
#define IMAGO_LAZY_LIBRARY(id, soname, variable) [IMAGO_LAZY_INDEX_##id] = {soname, variable, PTHREAD_ONCE_INIT, 0, ""},
#define IMAGO_LAZY_SYMBOL(id, name)
#include "lazy_symbols.h"
#undef IMAGO_LAZY_LIBRARY
#undef IMAGO_LAZY_SYMBOL
};

static const char *imago_lazy_path(imago_lazy_library library) {
    const char *override = getenv(imago_lazy_states[library].variable);
    return override && *override ? override : imago_lazy_states[library].soname;
}

// Fills `library`'s pointers from `handle`; returns the first missing function's name, or NULL.
static const char *imago_lazy_resolve(imago_lazy_library library, void *handle) {
#define IMAGO_LAZY_LIBRARY(id, soname, variable)
#define IMAGO_LAZY_SYMBOL(id, name)                                                                                     \
    if (IMAGO_LAZY_INDEX_##id == library) {                                                                             \
        imago_lazy_pointer_##name = dlsym(handle, #name);                                                               \
        if (!imago_lazy_pointer_##name) return #name;                                                                   \
    }
#include "lazy_symbols.h"
#undef IMAGO_LAZY_LIBRARY
#undef IMAGO_LAZY_SYMBOL
    return NULL;
}

static void imago_lazy_open(imago_lazy_library library) {
    imago_lazy_state *state = &imago_lazy_states[library];
    const char *path = imago_lazy_path(library);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *error = dlerror();
        snprintf(state->error, sizeof state->error, "%s", error ? error : path);
        return;
    }
    const char *missing = imago_lazy_resolve(library, handle);
    if (missing) {
        snprintf(state->error, sizeof state->error, "%s has no function %s", path, missing);
        // The pointers stay as they are; the library is never called.
        return;
    }
    __atomic_store_n(&state->loaded, 1, __ATOMIC_RELEASE);
}

#define IMAGO_LAZY_ONCE(id)                                                                                             \
    static void imago_lazy_open_##id(void) { imago_lazy_open(IMAGO_LAZY_INDEX_##id); }
IMAGO_LAZY_ONCE(jxl)
IMAGO_LAZY_ONCE(heif)
IMAGO_LAZY_ONCE(avif)
IMAGO_LAZY_ONCE(tiff)
IMAGO_LAZY_ONCE(rsvg)
IMAGO_LAZY_ONCE(avformat)
IMAGO_LAZY_ONCE(swscale)
IMAGO_LAZY_ONCE(raw)

int imago_lazy_load(imago_lazy_library library) {
    static void (*const openers[IMAGO_LAZY_COUNT])(void) = {imago_lazy_open_jxl,  imago_lazy_open_heif,     imago_lazy_open_avif,
                                                            imago_lazy_open_tiff, imago_lazy_open_rsvg,     imago_lazy_open_avformat,
                                                            imago_lazy_open_swscale, imago_lazy_open_raw};
    if ((unsigned)library >= IMAGO_LAZY_COUNT) return 0;
    pthread_once(&imago_lazy_states[library].once, openers[library]);
    return __atomic_load_n(&imago_lazy_states[library].loaded, __ATOMIC_ACQUIRE);
}

const char *imago_lazy_error(imago_lazy_library library) {
    if ((unsigned)library >= IMAGO_LAZY_COUNT) return "no such library";
    return imago_lazy_states[library].error;
}

const char *imago_lazy_soname(imago_lazy_library library) {
    if ((unsigned)library >= IMAGO_LAZY_COUNT) return "";
    return imago_lazy_path(library);
}

int imago_lazy_is_loaded(imago_lazy_library library) {
    if ((unsigned)library >= IMAGO_LAZY_COUNT) return 0;
    return __atomic_load_n(&imago_lazy_states[library].loaded, __ATOMIC_ACQUIRE);
}

#else

// Elsewhere the libraries are linked (Package.swift) and always there.
int imago_lazy_load(imago_lazy_library library) { (void)library; return 1; }
const char *imago_lazy_error(imago_lazy_library library) { (void)library; return ""; }
const char *imago_lazy_soname(imago_lazy_library library) { (void)library; return ""; }
int imago_lazy_is_loaded(imago_lazy_library library) { (void)library; return 1; }

#endif

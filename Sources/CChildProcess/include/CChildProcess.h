// A program run as a child process that can be stopped: what Imago uses for a library with no way
// to stop it from inside (Poppler, through pdfinfo and pdftoppm). The input is written to the
// child's standard input and its standard output read back, both through pipes, while a deadline
// runs; at the deadline, or when the output passes its limit, the child is killed (SIGKILL) and
// waited for, so a stopped request leaves no process behind. The child's memory is bounded by the
// kernel (RLIMIT_DATA and RLIMIT_AS), it cannot write files (RLIMIT_FSIZE 0), gets no descriptor
// but its three standard ones, no environment but what the caller passes, and its standard error
// goes to /dev/null.
#ifndef IMAGO_CHILD_PROCESS_H
#define IMAGO_CHILD_PROCESS_H

#include <stddef.h>
#include <stdint.h>

/// What to run and what it may use.
typedef struct {
    /// The program's absolute path.
    const char *path;
    /// Its arguments, argv[0] first, NULL last.
    char *const *arguments;
    /// Its environment, NULL last.
    char *const *environment;
    /// Bytes written to its standard input, which is then closed.
    const void *input;
    size_t input_length;
    /// Most bytes read from its standard output; past it the child is killed.
    size_t max_output;
    /// RLIMIT_DATA (the heap and private mappings it may make) in bytes; 0 for no limit.
    uint64_t max_data;
    /// RLIMIT_AS (its whole address space, libraries included) in bytes; 0 for no limit.
    uint64_t max_address_space;
    /// CLOCK_MONOTONIC nanoseconds at which the child is killed; 0 for none.
    int64_t deadline_ns;
} imago_child_request;

enum {
    /// The child ran and exited; `exit_status` says how.
    IMAGO_CHILD_EXITED = 0,
    /// The deadline passed: the child was killed.
    IMAGO_CHILD_TIMED_OUT = 1,
    /// Its output passed `max_output`: the child was killed.
    IMAGO_CHILD_OUTPUT_TOO_LARGE = 2,
    /// It could not be started (no such program, no memory, no pipes).
    IMAGO_CHILD_NOT_STARTED = 3,
};

/// What the run gave.
typedef struct {
    /// One of the IMAGO_CHILD_ outcomes.
    int outcome;
    /// The exit code (0…255), or minus the signal that ended it; meaningful for IMAGO_CHILD_EXITED.
    int exit_status;
    /// Its standard output (malloc'd, the caller frees it with imago_child_free), and its length.
    unsigned char *output;
    size_t output_length;
    /// errno when it could not be started.
    int error_number;
} imago_child_result;

/// Runs the request to its end; the result's output is the caller's to free.
void imago_child_run(const imago_child_request *request, imago_child_result *result);

/// Frees a result's output.
void imago_child_free(imago_child_result *result);

#endif

#define _GNU_SOURCE
#include "CChildProcess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/// Milliseconds poll may wait before the deadline (rounded up), -1 for none.
static int wait_ms(int64_t deadline_ns) {
    if (deadline_ns == 0) return -1;
    int64_t left = deadline_ns - now_ns();
    if (left <= 0) return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

static void set_limit(int resource, uint64_t bytes) {
    struct rlimit limit = {(rlim_t)bytes, (rlim_t)bytes};
    setrlimit(resource, &limit);
}

/// In the child, between fork and exec: only async-signal-safe calls.
static void become_child(const imago_child_request *request, int input, int output) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    // An ignored SIGPIPE would survive exec; a child whose reader left should end.
    signal(SIGPIPE, SIG_DFL);
    // Writing a file fails (RLIMIT_FSIZE 0) rather than ending the child: fontconfig may try its cache.
    signal(SIGXFSZ, SIG_IGN);
    if (dup2(input, 0) < 0 || dup2(output, 1) < 0) _exit(127);
    int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, 2) < 0) _exit(127);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
#endif
    {
        long most = sysconf(_SC_OPEN_MAX);
        if (most < 0 || most > 65536) most = 65536;
        for (int fd = 3; fd < most; fd++) close(fd);
    }
    if (request->max_data) set_limit(RLIMIT_DATA, request->max_data);
    if (request->max_address_space) set_limit(RLIMIT_AS, request->max_address_space);
    set_limit(RLIMIT_FSIZE, 0);
    set_limit(RLIMIT_CORE, 0);
    execve(request->path, request->arguments, request->environment);
    _exit(127);
}

/// Appends what `fd` has now to the output; 1 at its end, 0 when more may come, -1 past the limit.
static int read_some(int fd, imago_child_result *result, size_t *capacity, size_t max_output) {
    for (;;) {
        if (result->output_length == *capacity) {
            if (*capacity > max_output) return -1;
            size_t grown = *capacity < 65536 ? 65536 : *capacity * 2;
            // One byte past the limit tells an output that is too long from one that is exactly it.
            if (grown > max_output + 1) grown = max_output + 1;
            unsigned char *larger = realloc(result->output, grown);
            if (!larger) return -1;
            result->output = larger;
            *capacity = grown;
        }
        ssize_t got = read(fd, result->output + result->output_length, *capacity - result->output_length);
        if (got > 0) {
            result->output_length += (size_t)got;
            if (result->output_length > max_output) return -1;
            continue;
        }
        if (got == 0) return 1;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
    }
}

static void reap(pid_t pid, imago_child_result *result) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    result->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1;
}

void imago_child_run(const imago_child_request *request, imago_child_result *result) {
    memset(result, 0, sizeof *result);
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) {
        result->outcome = IMAGO_CHILD_NOT_STARTED;
        result->error_number = errno;
        return;
    }
    if (pipe2(from_child, O_CLOEXEC) != 0) {
        result->outcome = IMAGO_CHILD_NOT_STARTED;
        result->error_number = errno;
        close(to_child[0]);
        close(to_child[1]);
        return;
    }
    // A write to a child that has gone raises SIGPIPE in this thread: held back while the child
    // runs and taken before the mask is restored, so the process never sees it.
    sigset_t pipe_signal, previous;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);

    pid_t pid = fork();
    if (pid == 0) become_child(request, to_child[0], from_child[1]);
    int fork_error = errno;
    close(to_child[0]);
    close(from_child[1]);
    if (pid < 0) {
        close(to_child[1]);
        close(from_child[0]);
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
        result->outcome = IMAGO_CHILD_NOT_STARTED;
        result->error_number = fork_error;
        return;
    }
    int input = to_child[1], output = from_child[0];
    fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK);
    fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK);
    int exited = -1;
#ifdef SYS_pidfd_open
    exited = (int)syscall(SYS_pidfd_open, pid, 0);
#endif

    size_t written = 0, capacity = 0;
    if (request->input_length == 0) {
        close(input);
        input = -1;
    }
    int outcome = IMAGO_CHILD_EXITED, output_done = 0;
    for (;;) {
        struct pollfd watched[3];
        nfds_t count = 0;
        if (input >= 0) watched[count++] = (struct pollfd){.fd = input, .events = POLLOUT};
        if (!output_done) watched[count++] = (struct pollfd){.fd = output, .events = POLLIN};
        else if (exited >= 0) watched[count++] = (struct pollfd){.fd = exited, .events = POLLIN};
        if (request->deadline_ns && now_ns() >= request->deadline_ns) {
            outcome = IMAGO_CHILD_TIMED_OUT;
            break;
        }
        if (output_done) {
            int status = 0;
            pid_t done = waitpid(pid, &status, WNOHANG);
            if (done == pid) {
                result->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1;
                pid = 0;
                break;
            }
            if (exited < 0) {
                // No pidfd (a kernel before 5.3): look again in a millisecond.
                int ms = wait_ms(request->deadline_ns);
                poll(NULL, 0, ms < 0 || ms > 1 ? 1 : ms);
                continue;
            }
        }
        int ready = poll(watched, count, wait_ms(request->deadline_ns));
        if (ready < 0 && errno != EINTR) {
            outcome = IMAGO_CHILD_NOT_STARTED;
            result->error_number = errno;
            break;
        }
        if (ready <= 0) continue;
        for (nfds_t index = 0; index < count; index++) {
            if (!watched[index].revents) continue;
            if (watched[index].fd == input) {
                ssize_t sent = write(input, (const unsigned char *)request->input + written, request->input_length - written);
                if (sent > 0) written += (size_t)sent;
                if ((sent < 0 && errno != EAGAIN && errno != EINTR) || written == request->input_length) {
                    // Done, or the child stopped reading (EPIPE): it ends with what it has.
                    close(input);
                    input = -1;
                }
            } else if (watched[index].fd == output) {
                int state = read_some(output, result, &capacity, request->max_output);
                if (state < 0) {
                    outcome = IMAGO_CHILD_OUTPUT_TOO_LARGE;
                    goto stop;
                }
                if (state > 0) output_done = 1;
            }
        }
    }
stop:
    if (input >= 0) close(input);
    close(output);
    if (exited >= 0) close(exited);
    if (pid > 0) {
        // Stopped before it ended (deadline, output, a failed poll): killed and waited for.
        kill(pid, SIGKILL);
        reap(pid, result);
    }
    // Take a SIGPIPE the writes raised, then restore the thread's mask.
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_signal, NULL, &zero) == SIGPIPE) {}
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    result->outcome = outcome;
    if (outcome != IMAGO_CHILD_EXITED) {
        free(result->output);
        result->output = NULL;
        result->output_length = 0;
    }
}

void imago_child_free(imago_child_result *result) {
    free(result->output);
    result->output = NULL;
    result->output_length = 0;
}

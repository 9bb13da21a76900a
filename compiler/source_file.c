/* source_file.c: reading a blk source for the driver and the runtime. A
 * regular file only — a FIFO with no writer would block, a device such as
 * /dev/zero never end — or standard input where the caller asks, and never
 * more than BLK_MAX_SOURCE_BYTES: nothing is compiled from part of a file. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile.h"

SourceStatus source_read(const char *path, bool from_stdin, char **text, size_t *len, char *err, size_t err_size) {
    *text = NULL, *len = 0;
    int fd = from_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, err_size, "cannot read '%s': %s", path, strerror(errno));
        if (fd >= 0 && !from_stdin) close(fd);
        return SOURCE_UNREADABLE;
    }
    SourceStatus s = SOURCE_READ;
    if (!from_stdin && !S_ISREG(st.st_mode)) {
        snprintf(err, err_size, "'%s' is not a regular file (a %s)", path,
                 S_ISDIR(st.st_mode) ? "directory" : S_ISFIFO(st.st_mode) ? "FIFO" : "device or socket");
        s = SOURCE_NOT_REGULAR;
    } else if (!from_stdin && (uint64_t)st.st_size > BLK_MAX_SOURCE_BYTES) { /* before a byte is read */
        s = SOURCE_TOO_LARGE;
    }
    if (!from_stdin) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t cap = 1 << 16, n = 0;
    char *buf = s ? NULL : malloc(cap);
    if (!s && !buf) s = SOURCE_OUT_OF_MEMORY;
    int read_errno = 0;
    while (!s) { /* standard input, or a file that grows meanwhile: read to the limit and no further */
        if (n == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                s = SOURCE_OUT_OF_MEMORY;
                break;
            }
            buf = grown;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) read_errno = errno, s = SOURCE_UNREADABLE;
        if (got <= 0) break;
        n += (size_t)got;
        if (n > BLK_MAX_SOURCE_BYTES) s = SOURCE_TOO_LARGE;
    }
    if (!from_stdin) close(fd);
    if (s == SOURCE_TOO_LARGE)
        snprintf(err, err_size, "'%s' is larger than %zu MiB: not a blk source", path, BLK_MAX_SOURCE_BYTES >> 20);
    else if (s == SOURCE_OUT_OF_MEMORY)
        snprintf(err, err_size, "reading '%s': out of memory", path);
    else if (s == SOURCE_UNREADABLE)
        snprintf(err, err_size, "cannot read '%s': %s", path, strerror(read_errno));
    if (s) {
        free(buf);
        return s;
    }
    *text = buf, *len = n;
    return SOURCE_READ;
}

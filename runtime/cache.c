/* cache.c: see cache.h. File layout, all integers little-endian u64 unless
 * said: the magic (which names the format: bump it whenever the layout
 * changes, so that older entries read as misses and are rewritten), key
 * length, key, warps (u32), shared-memory bytes, PTX length, PTX, the
 * number of tensor maps and each map's ten fields (base parameter, stride
 * parameter + 1, stride scale, box inner, box rows, swizzle bytes, rows
 * parameter + 1, rows scale, columns parameter + 1, columns scale), then
 * FNV-1a-64 of everything before it. Format 1 ("BLKCACHE") had no
 * shared-memory bytes; format 2 ("BLKC0002") a cubin, never written, where
 * the maps are; format 3 ("BLKC0003") maps of six fields, no bounds. */
#define _POSIX_C_SOURCE 200809L
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "BLKC0005"
enum { MAP_FIELDS = 11 };

static uint64_t fnv1a(const void *data, size_t n, uint64_t h) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static _Thread_local char problem[1200]; /* why the last blk_cache_dir gave NULL */

const char *blk_cache_dir_problem(void) { return problem; }

/* mkdir -p; false with the reason in `problem` (a part that exists but is no directory too). */
static bool make_dirs(char *path) {
    for (char *p = path + 1;; p++) {
        if (*p && *p != '/') continue;
        char c = *p;
        *p = 0;
        struct stat st;
        bool ok = mkdir(path, 0755) == 0 || (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode));
        int err = errno;
        char part[600];
        snprintf(part, sizeof part, "%s", path);
        *p = c;
        if (!ok && err == EEXIST)
            snprintf(problem, sizeof problem, "cannot use the cache directory '%s': '%s' is not a directory", path, part);
        else if (!ok)
            snprintf(problem, sizeof problem, "cannot create the cache directory '%s': '%s': %s", path, part,
                     strerror(err));
        if (!ok || !c) return ok;
    }
}

const char *blk_cache_dir(char *buf, size_t size, bool *too_long) {
    *too_long = false;
    problem[0] = 0;
    const char *off = getenv("BLK_CACHE_DISABLE");
    if (off && *off && strcmp(off, "0") != 0) return NULL;
    const char *dir = getenv("BLK_CACHE_DIR");
    int n;
    if (dir && *dir) n = snprintf(buf, size, "%s", dir);
    else if (getenv("HOME")) n = snprintf(buf, size, "%s/.cache/blk", getenv("HOME"));
    else {
        snprintf(problem, sizeof problem, "no cache directory: neither BLK_CACHE_DIR nor HOME is set");
        return NULL;
    }
    /* never a truncated path: that would be some other directory */
    if (n < 0 || (size_t)n >= size) {
        *too_long = true;
        snprintf(problem, sizeof problem, "the cache directory path is longer than %zu bytes (set BLK_CACHE_DIR "
                 "shorter, or BLK_CACHE_DISABLE=1)", size - 1);
        return NULL;
    }
    return make_dirs(buf) ? buf : NULL;
}

/* Temporary files of stores that never finished (a process killed while
 * writing): removed once per process, at its first store, when an hour
 * old (a store takes milliseconds, so no live writer's file is that old). */
static void remove_stale_temporaries(const char *dir) {
    static atomic_bool done;
    if (atomic_exchange(&done, true)) return;
    DIR *d = opendir(dir);
    if (!d) return;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d));) {
        const char *t = strstr(e->d_name, ".blkc.tmp.");
        if (!t || strlen(t) != 16) continue; /* NAME.blkc.tmp.XXXXXX, as blk_cache_store makes them */
        char path[1400];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > 3600) unlink(path);
    }
    closedir(d);
}

void blk_cache_path(const char *dir, const char *key, size_t key_len, char *buf, size_t size) {
    /* two independent 64-bit hashes name the file; the key inside decides */
    snprintf(buf, size, "%s/%016llx%016llx.blkc", dir, (unsigned long long)fnv1a(key, key_len, 0xcbf29ce484222325ull),
             (unsigned long long)fnv1a(key, key_len, 0x84222325cbf29ce4ull));
}

typedef struct {
    const unsigned char *p;
    size_t left;
} Reader;

static bool take(Reader *r, void *out, size_t n) {
    if (r->left < n) return false;
    memcpy(out, r->p, n);
    r->p += n;
    r->left -= n;
    return true;
}

static bool take_u64(Reader *r, uint64_t *v) { return take(r, v, 8); }

/* Reads the whole entry at path, or NULL: only a regular file (never a link,
 * a FIFO that would block, or a device), and only one of a plausible size,
 * checked before a byte is read. */
static unsigned char *read_entry(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    unsigned char *data = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 16 && st.st_size <= BLK_CACHE_MAX_ENTRY &&
        (data = malloc((size_t)st.st_size))) {
        size_t got = 0, want = (size_t)st.st_size;
        while (got < want) {
            ssize_t n = read(fd, data + got, want - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += (size_t)n;
        }
        if (got != want) free(data), data = NULL;
        *len = want;
    }
    close(fd);
    return data;
}

/* A tensor map's fields as nvptx.h allows them. */
/* A bound's scale: 0 (none) or at most 2^32 either way (nvptx.h's extents go to 2^32). */
static bool scale_ok(uint64_t f) { return (int64_t)f >= -((int64_t)1 << 32) && (int64_t)f <= (int64_t)1 << 32; }

static bool map_ok(const uint64_t f[MAP_FIELDS]) {
    uint64_t inner = f[3], swizzle = f[5], es = f[10], row = inner * es;
    return f[0] < BLK_MAX_KERNEL_ARGS && f[1] <= BLK_MAX_KERNEL_ARGS && f[2] >= 1 && f[2] <= (uint64_t)1 << 38 &&
           (es == 1 || es == 2) && (row == 16 || row == 32 || row == 64 || row == 128) && f[4] >= 8 && f[4] <= 256 &&
           f[4] % 8 == 0 && swizzle == (uint64_t)nvptx_tma_swizzle_bytes((int)inner, (int)es) &&
           f[6] <= BLK_MAX_KERNEL_ARGS && scale_ok(f[7]) && f[8] <= BLK_MAX_KERNEL_ARGS && scale_ok(f[9]);
}

bool blk_cache_load(const char *dir, const char *key, size_t key_len, BlkCacheEntry *out) {
    memset(out, 0, sizeof *out);
    char path[1100];
    blk_cache_path(dir, key, key_len, path, sizeof path);
    size_t len = 0;
    unsigned char *data = read_entry(path, &len);
    bool ok = data != NULL;
    uint64_t sum = 0;
    if (ok) { /* the checksum covers everything before it */
        memcpy(&sum, data + len - 8, 8);
        ok = memcmp(data, MAGIC, 8) == 0 && sum == fnv1a(data, len - 8, 0xcbf29ce484222325ull);
    }
    /* A checksum only catches accidents; every field is checked as well, so a
     * crafted entry cannot launch with a bad block size or hand the driver junk. */
    Reader r = {ok ? data + 8 : NULL, ok ? len - 16 : 0};
    uint64_t klen = 0, plen = 0, shared = 0;
    uint32_t warps = 0;
    ok = ok && take_u64(&r, &klen) && klen == key_len && r.left >= klen && memcmp(r.p, key, klen) == 0;
    if (ok) r.p += klen, r.left -= klen;
    /* any count a block may have: a kernel with a producer warpgroup launches 12 or 20 */
    ok = ok && take(&r, &warps, 4) && warps >= 1 && warps <= 32 &&
         take_u64(&r, &shared) && shared <= BLK_CACHE_MAX_SHARED && take_u64(&r, &plen) && plen <= r.left &&
         memchr(r.p, 0, plen) == NULL;
    if (ok) {
        out->ptx = malloc(plen + 1);
        ok = out->ptx && take(&r, out->ptx, plen);
        if (ok) out->ptx[plen] = 0, out->ptx_len = plen;
    }
    uint64_t nmaps = 0;
    ok = ok && take_u64(&r, &nmaps) && nmaps <= NVPTX_MAX_TENSOR_MAPS && r.left == nmaps * MAP_FIELDS * 8;
    for (uint64_t i = 0; ok && i < nmaps; i++) {
        uint64_t f[MAP_FIELDS] = {0};
        ok = take(&r, f, sizeof f) && map_ok(f);
        if (ok)
            out->tensor_maps.map[i] = (NvptxTensorMap){.base_param = (int)f[0], .stride_param = (int)f[1] - 1,
                                                       .stride_scale = (int64_t)f[2], .box_inner = (int)f[3],
                                                       .box_rows = (int)f[4], .swizzle_bytes = (int)f[5],
                                                       .rows_param = (int)f[6] - 1, .rows_scale = (int64_t)f[7],
                                                       .cols_param = (int)f[8] - 1, .cols_scale = (int64_t)f[9],
                                                       .elem_bytes = (int)f[10]};
    }
    if (ok) {
        out->tensor_maps.count = (int)nmaps;
        out->warps = (int)warps;
        out->shared_bytes = (int64_t)shared;
    }
    free(data);
    if (!ok) blk_cache_entry_free(out);
    return ok;
}

static bool put(FILE *f, const void *p, size_t n, uint64_t *sum) {
    if (n == 0) return true;
    *sum = fnv1a(p, n, *sum);
    return fwrite(p, 1, n, f) == n;
}

bool blk_cache_store(const char *dir, const char *key, size_t key_len, const BlkCacheEntry *e) {
    remove_stale_temporaries(dir);
    char path[1100], tmp[1200];
    blk_cache_path(dir, key, key_len, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) return false;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        return false;
    }
    uint64_t sum = 0xcbf29ce484222325ull, klen = key_len, plen = e->ptx_len, nmaps = (uint64_t)e->tensor_maps.count;
    uint64_t shared = (uint64_t)e->shared_bytes;
    uint32_t warps = (uint32_t)e->warps;
    bool ok = put(f, MAGIC, 8, &sum) && put(f, &klen, 8, &sum) && put(f, key, key_len, &sum) &&
              put(f, &warps, 4, &sum) && put(f, &shared, 8, &sum) && put(f, &plen, 8, &sum) &&
              put(f, e->ptx, e->ptx_len, &sum) && put(f, &nmaps, 8, &sum);
    for (int i = 0; ok && i < e->tensor_maps.count; i++) {
        const NvptxTensorMap *m = &e->tensor_maps.map[i];
        uint64_t fields[MAP_FIELDS] = {(uint64_t)m->base_param, (uint64_t)(m->stride_param + 1),
                                       (uint64_t)m->stride_scale, (uint64_t)m->box_inner, (uint64_t)m->box_rows,
                                       (uint64_t)m->swizzle_bytes, (uint64_t)(m->rows_param + 1),
                                       (uint64_t)m->rows_scale, (uint64_t)(m->cols_param + 1),
                                       (uint64_t)m->cols_scale, (uint64_t)m->elem_bytes};
        ok = put(f, fields, sizeof fields, &sum);
    }
    ok = ok && fwrite(&sum, 1, 8, f) == 8;
    ok = fclose(f) == 0 && ok;
    /* rename is atomic: readers see the old entry or the whole new one */
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    return ok;
}

void blk_cache_entry_free(BlkCacheEntry *e) {
    free(e->ptx);
    memset(e, 0, sizeof *e);
}

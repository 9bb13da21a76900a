/* test_cache.c: the on-disk kernel cache (runtime/cache.c): round trips
 * (tensor maps included), misses for another key, a damaged entry or one of
 * an earlier format, atomic writes from concurrent processes, hostile entries
 * (FIFOs, links, huge files, crafted fields and maps), the environment
 * variables that place or disable it, and the build identity in its keys. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "blk.h"
#include "cache.h"
#include "compile.h" /* blk_build_id */

static char dir[64];

static void make_dir(void) {
    snprintf(dir, sizeof dir, "/tmp/blk-cache-test-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void remove_dir(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(cache, .init = make_dir, .fini = remove_dir);

/* A map without bounds (nvptx.h's fields in order). */
#define MAP(base, sp, ss, inner, rows, swizzle) {base, sp, ss, inner, rows, swizzle, -1, -1, 0, 0, 2}

/* Two maps: one with a stride parameter and both bounds, one without
 * (parameters -1, stored as 0), so both encodings are exercised. */
static BlkCacheEntry sample(void) {
    static char ptx[] = ".version 7.8\n.target sm_90\n";
    return (BlkCacheEntry){ptx, strlen(ptx), 4, 100 * 1024,
                           {2, {{0, 6, 1, 64, 128, 128, .rows_param = 3, .rows_scale = 1, .cols_param = 5, .cols_scale = -7,
                                 .elem_bytes = 2},
                                 MAP(1, -1, 64, 32, 64, 64)}}};
}

/* Field by field: the structs' padding is not part of an entry. */
static void expect_same_maps(const BlkCacheEntry *got, const BlkCacheEntry *want) {
    cr_expect_eq(got->tensor_maps.count, want->tensor_maps.count);
    for (int i = 0; i < want->tensor_maps.count && i < got->tensor_maps.count; i++) {
        const NvptxTensorMap *g = &got->tensor_maps.map[i], *w = &want->tensor_maps.map[i];
        cr_expect_eq(g->base_param, w->base_param, "map %d", i);
        cr_expect_eq(g->stride_param, w->stride_param, "map %d", i);
        cr_expect_eq(g->stride_scale, w->stride_scale, "map %d", i);
        cr_expect_eq(g->box_inner, w->box_inner, "map %d", i);
        cr_expect_eq(g->box_rows, w->box_rows, "map %d", i);
        cr_expect_eq(g->swizzle_bytes, w->swizzle_bytes, "map %d", i);
        cr_expect_eq(g->rows_param, w->rows_param, "map %d", i);
        cr_expect_eq(g->rows_scale, w->rows_scale, "map %d", i);
        cr_expect_eq(g->cols_param, w->cols_param, "map %d", i);
        cr_expect_eq(g->cols_scale, w->cols_scale, "map %d", i);
        cr_expect_eq(g->elem_bytes, w->elem_bytes, "map %d", i);
    }
}

Test(cache, an_entry_round_trips) {
    BlkCacheEntry e = sample(), got;
    const char *key = "blkc 0.1.0\nkernel add\nsource ...";
    cr_assert(blk_cache_store(dir, key, strlen(key), &e));
    cr_assert(blk_cache_load(dir, key, strlen(key), &got));
    cr_expect_eq(got.ptx_len, e.ptx_len);
    cr_expect_str_eq(got.ptx, e.ptx);
    expect_same_maps(&got, &e);
    cr_expect_eq(got.warps, 4);
    cr_expect_eq(got.shared_bytes, 100 * 1024, "the shared memory is kept with the warps");
    blk_cache_entry_free(&got);
    cr_expect_not(blk_cache_load(dir, "another key", 11, &got), "a different key misses");
    /* a kernel that copies nothing by TMA has no maps */
    e.tensor_maps.count = 0;
    cr_assert(blk_cache_store(dir, key, strlen(key), &e));
    cr_assert(blk_cache_load(dir, key, strlen(key), &got));
    cr_expect_str_eq(got.ptx, e.ptx);
    cr_expect_eq(got.tensor_maps.count, 0);
    cr_expect_eq(got.shared_bytes, e.shared_bytes);
    blk_cache_entry_free(&got);
    /* as many maps as a kernel may have, each field at an edge of its range */
    e.tensor_maps.count = NVPTX_MAX_TENSOR_MAPS;
    for (int i = 0; i < NVPTX_MAX_TENSOR_MAPS; i++) {
        bool lo = i % 2 == 0;
        int es = i < NVPTX_MAX_TENSOR_MAPS / 2 ? 2 : 1, inner = 16 / es << (i % 4); /* rows of 16 to 128 bytes */
        int edge = lo ? -1 : BLK_MAX_KERNEL_ARGS - 1;
        int64_t scale = lo ? -((int64_t)1 << 32) : (int64_t)1 << 32;
        e.tensor_maps.map[i] = (NvptxTensorMap){lo ? 0 : BLK_MAX_KERNEL_ARGS - 1, edge, lo ? 1 : (int64_t)1 << 38, inner,
                                                lo ? 8 : 256, inner * es == 16 ? 0 : inner * es, edge, edge, scale, scale, es};
    }
    cr_assert(blk_cache_store(dir, key, strlen(key), &e));
    cr_assert(blk_cache_load(dir, key, strlen(key), &got));
    expect_same_maps(&got, &e);
    blk_cache_entry_free(&got);
}

Test(cache, damaged_entries_are_misses) {
    BlkCacheEntry e = sample(), got;
    const char *key = "k";
    char path[1100];
    blk_cache_path(dir, key, 1, path, sizeof path);
    cr_assert(blk_cache_store(dir, key, 1, &e));
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    /* the last map's box_rows (maps are 80 bytes, before the 8-byte checksum)
     * from 64 to 72: still a valid map, so only the checksum can tell */
    f = fopen(path, "r+b");
    fseek(f, size - 8 - 80 + 4 * 8, SEEK_SET);
    fputc(72, f);
    fclose(f);
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "a corrupt entry must not load");
    /* rebuilt, then truncated */
    cr_assert(blk_cache_store(dir, key, 1, &e));
    cr_assert(blk_cache_load(dir, key, 1, &got));
    blk_cache_entry_free(&got);
    cr_assert_eq(truncate(path, size / 2), 0);
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "a truncated entry must not load");
    cr_assert_eq(truncate(path, 0), 0);
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "an empty entry must not load");
}

static uint64_t fnv1a(const void *data, size_t n, uint64_t h) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* An entry file written by hand, for what blk_cache_store cannot write. */
typedef struct {
    unsigned char buf[1024];
    size_t n;
} Raw;

static void raw_put(Raw *r, const void *p, size_t n) {
    cr_assert_leq(r->n + n, sizeof r->buf);
    memcpy(r->buf + r->n, p, n);
    r->n += n;
}

static void raw_put_u64(Raw *r, uint64_t v) { raw_put(r, &v, 8); }

/* Appends the checksum, as a whole entry has, and writes r as key's entry. */
static void raw_write(Raw *r, const char *key) {
    raw_put_u64(r, fnv1a(r->buf, r->n, 0xcbf29ce484222325ull));
    char path[1100];
    blk_cache_path(dir, key, strlen(key), path, sizeof path);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(r->buf, 1, r->n, f) == r->n);
    cr_assert_eq(fclose(f), 0);
}

Test(cache, an_entry_of_the_previous_format_is_a_miss) {
    const char *key = "k1", *ptx = ".version 7.8\n";
    unsigned char cubin[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    uint32_t warps = 4;
    BlkCacheEntry got;
    /* format 1: "BLKCACHE", key length, key, warps (u32), PTX length, PTX,
     * cubin length, cubin, checksum; a whole, valid entry of its time */
    Raw r = {.n = 0};
    raw_put(&r, "BLKCACHE", 8), raw_put_u64(&r, strlen(key)), raw_put(&r, key, strlen(key)), raw_put(&r, &warps, 4);
    raw_put_u64(&r, strlen(ptx)), raw_put(&r, ptx, strlen(ptx)), raw_put_u64(&r, sizeof cubin);
    raw_put(&r, cubin, sizeof cubin);
    raw_write(&r, key);
    cr_expect_not(blk_cache_load(dir, key, strlen(key), &got), "an entry without the shared memory must not load");
    /* format 2: "BLKC0002", then format 1's fields with the shared-memory
     * bytes after the warps; its cubin sits where the maps are now */
    r.n = 0;
    raw_put(&r, "BLKC0002", 8), raw_put_u64(&r, strlen(key)), raw_put(&r, key, strlen(key)), raw_put(&r, &warps, 4);
    raw_put_u64(&r, 100 * 1024), raw_put_u64(&r, strlen(ptx)), raw_put(&r, ptx, strlen(ptx));
    raw_put_u64(&r, sizeof cubin), raw_put(&r, cubin, sizeof cubin);
    raw_write(&r, key);
    cr_expect_not(blk_cache_load(dir, key, strlen(key), &got), "an entry with a cubin for maps must not load");
    /* format 2 as the runtime wrote it, without a cubin: byte for byte an
     * entry with no maps but for the magic, which alone must tell them apart */
    r.n = 0;
    raw_put(&r, "BLKC0002", 8), raw_put_u64(&r, strlen(key)), raw_put(&r, key, strlen(key)), raw_put(&r, &warps, 4);
    raw_put_u64(&r, 100 * 1024), raw_put_u64(&r, strlen(ptx)), raw_put(&r, ptx, strlen(ptx)), raw_put_u64(&r, 0);
    raw_write(&r, key);
    cr_expect_not(blk_cache_load(dir, key, strlen(key), &got), "an entry of format 2 without a cubin must not load");
    /* and storing the entry again replaces it */
    uint64_t klen = strlen(key);
    BlkCacheEntry e = sample();
    cr_assert(blk_cache_store(dir, key, klen, &e));
    cr_assert(blk_cache_load(dir, key, klen, &got));
    cr_expect_eq(got.shared_bytes, e.shared_bytes);
    blk_cache_entry_free(&got);
}

Test(cache, concurrent_writers_leave_a_whole_entry) {
    BlkCacheEntry e = sample(), got;
    const char *key = "shared";
    pid_t kids[8];
    for (int i = 0; i < 8; i++) {
        kids[i] = fork();
        cr_assert(kids[i] >= 0);
        if (kids[i] == 0) {
            for (int rep = 0; rep < 50; rep++) blk_cache_store(dir, key, strlen(key), &e);
            _exit(0);
        }
    }
    for (int i = 0; i < 50; i++) {
        /* a reader during the writes sees no entry or a whole one, never a torn one */
        if (blk_cache_load(dir, key, strlen(key), &got)) {
            cr_expect_str_eq(got.ptx, e.ptx);
            expect_same_maps(&got, &e);
            blk_cache_entry_free(&got);
        }
    }
    for (int i = 0; i < 8; i++) waitpid(kids[i], NULL, 0);
    cr_expect(blk_cache_load(dir, key, strlen(key), &got));
    blk_cache_entry_free(&got);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c tmp", dir);
    FILE *p = popen(cmd, "r");
    int tmps = -1;
    cr_assert_eq(fscanf(p, "%d", &tmps), 1);
    pclose(p);
    cr_expect_eq(tmps, 0, "no temporary files left behind");
}

Test(cache, the_environment_places_or_disables_it) {
    char buf[512], want[512];
    snprintf(want, sizeof want, "%s/a/b", dir);
    setenv("BLK_CACHE_DIR", want, 1);
    unsetenv("BLK_CACHE_DISABLE");
    bool too_long;
    cr_expect_str_eq(blk_cache_dir(buf, sizeof buf, &too_long), want);
    cr_expect_eq(access(want, W_OK), 0, "created with its parents");
    char longer[1100];
    memset(longer, 'x', sizeof longer - 1);
    longer[0] = '/', longer[sizeof longer - 1] = 0;
    setenv("BLK_CACHE_DIR", longer, 1);
    cr_expect_null(blk_cache_dir(buf, sizeof buf, &too_long), "a path cut to fit names another directory");
    cr_expect(too_long);
    setenv("BLK_CACHE_DIR", want, 1);
    cr_expect_str_eq(blk_cache_directory(), want, "the public API says the same");
    setenv("BLK_CACHE_DISABLE", "1", 1);
    cr_expect_null(blk_cache_dir(buf, sizeof buf, &too_long));
    cr_expect_not(too_long);
    cr_expect_null(blk_cache_directory());
    unsetenv("BLK_CACHE_DISABLE");
    unsetenv("BLK_CACHE_DIR");
    setenv("HOME", dir, 1);
    snprintf(want, sizeof want, "%s/.cache/blk", dir);
    cr_expect_str_eq(blk_cache_dir(buf, sizeof buf, &too_long), want);
    cr_expect_str_eq(blk_cache_dir_problem(), "");
}

/* A cache directory that cannot be one is reported, never taken silently. */
Test(cache, an_unusable_directory_says_why) {
    char file[512], below[600], longer[5000];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fclose(f);
    unsetenv("BLK_CACHE_DISABLE");
    setenv("BLK_CACHE_DIR", file, 1);
    cr_expect_null(blk_cache_directory(), "a regular file taken as the cache directory");
    cr_expect(strstr(blk_last_error(), "is not a directory") && strstr(blk_last_error(), file), "%s",
              blk_last_error());
    snprintf(below, sizeof below, "%s/sub", file);
    setenv("BLK_CACHE_DIR", below, 1);
    cr_expect_null(blk_cache_directory());
    cr_expect(strstr(blk_last_error(), "cannot use the cache directory") && strstr(blk_last_error(), below) &&
              strstr(blk_last_error(), "plain' is not a directory"), "%s", blk_last_error());
    memset(longer, 'y', sizeof longer - 1);
    longer[0] = '/', longer[sizeof longer - 1] = 0;
    setenv("BLK_CACHE_DIR", longer, 1);
    cr_expect_null(blk_cache_directory());
    cr_expect(strstr(blk_last_error(), "is longer than"), "%s", blk_last_error());
    setenv("BLK_CACHE_DISABLE", "1", 1);
    cr_expect_null(blk_cache_directory());
    cr_expect_str_empty(blk_last_error(), "the cache off is no error");
    unsetenv("BLK_CACHE_DISABLE");
    unsetenv("BLK_CACHE_DIR");
}

/* A store left unfinished (its writer killed) leaves a temporary file: an
 * hour old, the next process's first store removes it; a young one stays. */
Test(cache, temporaries_of_killed_writers_are_removed) {
    char old_tmp[600], young_tmp[600], other[600];
    snprintf(old_tmp, sizeof old_tmp, "%s/0123456789abcdef0123456789abcdef.blkc.tmp.Ab12Cd", dir);
    snprintf(young_tmp, sizeof young_tmp, "%s/fedcba9876543210fedcba9876543210.blkc.tmp.Xy34Zw", dir);
    snprintf(other, sizeof other, "%s/notes.tmp.Ab12Cd", dir); /* not the cache's: never touched */
    const char *paths[] = {old_tmp, young_tmp, other};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(paths[i], "w");
        cr_assert(f);
        fputs("partial", f);
        fclose(f);
    }
    struct timespec two_hours_ago[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, old_tmp, two_hours_ago, 0), 0);
    cr_assert_eq(utimensat(AT_FDCWD, other, two_hours_ago, 0), 0);
    BlkCacheEntry e = sample();
    cr_assert(blk_cache_store(dir, "k", 1, &e));
    cr_expect_neq(access(old_tmp, F_OK), 0, "an hour-old temporary was left");
    cr_expect_eq(access(young_tmp, F_OK), 0, "a live writer's temporary was removed");
    cr_expect_eq(access(other, F_OK), 0, "a file that is not the cache's was removed");
}

Test(cache, only_regular_files_of_a_plausible_size_are_read, .timeout = 20) {
    const char *key = "k";
    char path[1100];
    blk_cache_path(dir, key, 1, path, sizeof path);
    BlkCacheEntry got;
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "a FIFO is a miss, and does not block");
    unlink(path);
    cr_assert_eq(symlink("/dev/zero", path), 0);
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "a link (to an endless device) is a miss");
    unlink(path);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fclose(f);
    cr_assert_eq(truncate(path, BLK_CACHE_MAX_ENTRY + 1), 0); /* sparse: no disk used */
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "an oversized entry is a miss");
    unlink(path);
}

Test(cache, every_field_is_checked_not_just_the_checksum) {
    /* each entry below has a correct checksum, as a crafted one would */
    const char *key = "k";
    BlkCacheEntry got;
    int bad_warps[] = {0, -1, 33, 64, 1 << 27};
    for (size_t i = 0; i < sizeof bad_warps / sizeof *bad_warps; i++) {
        BlkCacheEntry e = sample();
        e.warps = bad_warps[i];
        cr_assert(blk_cache_store(dir, key, 1, &e));
        cr_expect_not(blk_cache_load(dir, key, 1, &got), "warps %d loaded", bad_warps[i]);
    }
    /* a kernel with a producer warpgroup launches 12 warps (8 and 4) */
    BlkCacheEntry ws = sample();
    ws.warps = 12;
    cr_assert(blk_cache_store(dir, key, 1, &ws));
    cr_expect(blk_cache_load(dir, key, 1, &got) && got.warps == 12, "12 warps not loaded");
    blk_cache_entry_free(&got);
    BlkCacheEntry e = sample();
    e.shared_bytes = (int64_t)BLK_CACHE_MAX_SHARED + 1;
    cr_assert(blk_cache_store(dir, key, 1, &e));
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "an impossible shared-memory size loaded");
    /* each bad map stands second, after a valid one, so every map is checked */
    struct {
        NvptxTensorMap map;
        const char *what;
    } bad_maps[] = {
        {MAP(64, -1, 1, 64, 128, 128), "base_param 64 (past the last argument)"},
        {MAP(-1, -1, 1, 64, 128, 128), "base_param -1"},
        {MAP(0, 64, 1, 64, 128, 128), "stride_param 64 (past the last argument)"},
        {MAP(0, -2, 1, 64, 128, 128), "stride_param -2"},
        {MAP(0, 6, 0, 64, 128, 128), "stride_scale 0"},
        {MAP(0, 6, ((int64_t)1 << 38) + 1, 64, 128, 128), "stride_scale 2^38 + 1"},
        {MAP(0, 6, 1, 24, 128, 128), "box_inner 24"},
        {MAP(0, 6, 1, 128, 128, 256), "box_inner 128"},
        {MAP(0, 6, 1, 64, 0, 128), "box_rows 0"},
        {MAP(0, 6, 1, 64, 4, 128), "box_rows 4"},
        {MAP(0, 6, 1, 64, 12, 128), "box_rows 12 (not a multiple of 8)"},
        {MAP(0, 6, 1, 64, 264, 128), "box_rows 264"},
        {MAP(0, 6, 1, 32, 128, 128), "swizzle 128 with box_inner 32"},
        {MAP(0, 6, 1, 64, 128, 0), "swizzle 0 with box_inner 64"},
        {MAP(0, 6, 1, 8, 128, 32), "swizzle 32 with box_inner 8"},
        {MAP(0, 6, 1, 8, 128, 16), "swizzle 16 (no such mode) with box_inner 8"},
        {{0, 6, 1, 64, 128, 128, -1, -1, 0, 0, 0}, "elem_bytes 0"},
        {{0, 6, 1, 64, 128, 128, -1, -1, 0, 0, 4}, "elem_bytes 4"},
        {{0, 6, 1, 64, 128, 128, -1, -1, 0, 0, 1}, "swizzle 128 with 64 one-byte elements"},
        {{0, 6, 1, 8, 128, 0, -1, -1, 0, 0, 1}, "box_inner 8 one-byte elements (8 bytes)"},
        {{0, 6, 1, 64, 128, 128, .rows_param = 64, .rows_scale = 1, .cols_param = -1, .elem_bytes = 2}, "rows_param 64 (past the last argument)"},
        {{0, 6, 1, 64, 128, 128, .rows_param = -1, .cols_param = -2, .cols_scale = 1, .elem_bytes = 2}, "cols_param -2"},
        {{0, 6, 1, 64, 128, 128, .rows_param = 3, .rows_scale = ((int64_t)1 << 32) + 1, .cols_param = -1, .elem_bytes = 2}, "rows_scale 2^32 + 1"},
        {{0, 6, 1, 64, 128, 128, .rows_param = -1, .cols_param = 3, .cols_scale = -((int64_t)1 << 32) - 1, .elem_bytes = 2}, "cols_scale -2^32 - 1"},
    };
    for (size_t i = 0; i < sizeof bad_maps / sizeof *bad_maps; i++) {
        e = sample();
        e.tensor_maps.map[1] = bad_maps[i].map;
        cr_assert(blk_cache_store(dir, key, 1, &e));
        cr_expect_not(blk_cache_load(dir, key, 1, &got), "a map with %s loaded", bad_maps[i].what);
    }
    /* more maps than a kernel may have: the writer never writes that many, so
     * by hand; with one fewer the same entry loads, so the count is the cause */
    for (int nmaps = NVPTX_MAX_TENSOR_MAPS; nmaps <= NVPTX_MAX_TENSOR_MAPS + 1; nmaps++) {
        uint32_t warps = 4;
        const char *ptx = ".version 7.8\n";
        Raw r = {.n = 0};
        raw_put(&r, "BLKC0005", 8), raw_put_u64(&r, 1), raw_put(&r, key, 1), raw_put(&r, &warps, 4);
        raw_put_u64(&r, 0), raw_put_u64(&r, strlen(ptx)), raw_put(&r, ptx, strlen(ptx)), raw_put_u64(&r, (uint64_t)nmaps);
        for (int i = 0; i < nmaps; i++) {
            uint64_t fields[11] = {(uint64_t)i, 0, 1, 64, 128, 128, 0, 0, 0, 0, 2};
            raw_put(&r, fields, sizeof fields);
        }
        raw_write(&r, key);
        bool loaded = blk_cache_load(dir, key, 1, &got);
        if (nmaps <= NVPTX_MAX_TENSOR_MAPS) {
            cr_expect(loaded, "%d maps, written by hand, must load", nmaps);
            cr_expect_eq(got.tensor_maps.count, nmaps);
            blk_cache_entry_free(&got);
        } else {
            cr_expect_not(loaded, "%d maps loaded", nmaps);
        }
    }
    /* a count that disagrees with the maps that follow it */
    for (int bias = -1; bias <= 1; bias += 2) {
        uint32_t warps = 4;
        Raw r = {.n = 0};
        raw_put(&r, "BLKC0005", 8), raw_put_u64(&r, 1), raw_put(&r, key, 1), raw_put(&r, &warps, 4);
        raw_put_u64(&r, 0), raw_put_u64(&r, 0), raw_put_u64(&r, (uint64_t)(2 + bias));
        for (int i = 0; i < 2; i++) {
            uint64_t fields[11] = {(uint64_t)i, 0, 1, 64, 128, 128, 0, 0, 0, 0, 2};
            raw_put(&r, fields, sizeof fields);
        }
        raw_write(&r, key);
        cr_expect_not(blk_cache_load(dir, key, 1, &got), "a count of %d before 2 maps loaded", 2 + bias);
    }
    e = sample();
    char ptx[] = ".version 7.8\0junk";
    e.ptx = ptx, e.ptx_len = sizeof ptx - 1;
    cr_assert(blk_cache_store(dir, key, 1, &e));
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "PTX with a NUL inside loaded");
    e = sample();
    cr_assert(blk_cache_store(dir, key, 1, &e));
    cr_assert(blk_cache_load(dir, key, 1, &got), "the valid entry must still load");
    blk_cache_entry_free(&got);
}

/* The build identity that keys carry (build_id.c) is the GNU build-id that
 * readelf finds in this test program, which links libblk.a. */
Test(cache, keys_name_the_build_readelf_finds) {
    char id[128];
    cr_assert(blk_build_id(id, sizeof id), "no build-id found: %s", id);
    cr_expect_geq(strlen(id), 16);
    cr_expect_eq(strspn(id, "0123456789abcdef"), strlen(id), "%s", id);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0);
    exe[n] = 0;
    char cmd[4200], out[4096] = "";
    snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>&1", exe);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = 0;
    pclose(p);
    const char *at = strstr(out, "Build ID: ");
    cr_assert_not_null(at, "readelf found no build-id: %s", out);
    cr_expect_eq(strncmp(at + 10, id, strlen(id)), 0, "readelf: %.60s, blk: %s", at + 10, id);
    char again[128];
    blk_build_id(again, sizeof again);
    cr_expect_str_eq(again, id);
    cr_expect(!blk_build_id(again, 8) && strcmp(again, "none") == 0, "%s", again); /* too small a buffer */
}

/* test_cache.c: the on-disk kernel cache (runtime/cache.c): round trips,
 * misses for another key, a damaged entry or one of the previous format,
 * atomic writes from concurrent processes, hostile entries (FIFOs, links,
 * huge files, crafted fields), and the environment variables
 * that place or disable it. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blk.h"
#include "cache.h"

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

static BlkCacheEntry sample(void) {
    static char ptx[] = ".version 7.8\n.target sm_90\n";
    static unsigned char cubin[300];
    for (size_t i = 0; i < sizeof cubin; i++) cubin[i] = (unsigned char)(i * 7);
    memcpy(cubin, "\x7f" "ELF", 4); /* the loader accepts only an ELF image */
    return (BlkCacheEntry){ptx, strlen(ptx), cubin, sizeof cubin, 4, 100 * 1024};
}

Test(cache, an_entry_round_trips) {
    BlkCacheEntry e = sample(), got;
    const char *key = "blkc 0.1.0\nkernel add\nsource ...";
    cr_assert(blk_cache_store(dir, key, strlen(key), &e));
    cr_assert(blk_cache_load(dir, key, strlen(key), &got));
    cr_expect_eq(got.ptx_len, e.ptx_len);
    cr_expect_str_eq(got.ptx, e.ptx);
    cr_expect_eq(got.cubin_len, e.cubin_len);
    cr_expect_arr_eq(got.cubin, e.cubin, e.cubin_len);
    cr_expect_eq(got.warps, 4);
    cr_expect_eq(got.shared_bytes, 100 * 1024, "the shared memory is kept with the warps");
    blk_cache_entry_free(&got);
    cr_expect_not(blk_cache_load(dir, "another key", 11, &got), "a different key misses");
    /* what the runtime stores: PTX alone, which the driver's JIT loads */
    e.cubin = NULL, e.cubin_len = 0;
    cr_assert(blk_cache_store(dir, key, strlen(key), &e));
    cr_assert(blk_cache_load(dir, key, strlen(key), &got));
    cr_expect_str_eq(got.ptx, e.ptx);
    cr_expect_null(got.cubin);
    cr_expect_eq(got.cubin_len, 0);
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
    /* a flipped byte in the cubin */
    f = fopen(path, "r+b");
    fseek(f, size - 20, SEEK_SET);
    fputc('X', f);
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

Test(cache, an_entry_of_the_previous_format_is_a_miss) {
    /* format 1: "BLKCACHE", key length, key, warps (u32), PTX length, PTX,
     * cubin length, cubin, checksum; a whole, valid entry of its time */
    const char *key = "k1", *ptx = ".version 7.8\n";
    unsigned char buf[256], cubin[16] = {1, 2, 3};
    size_t n = 0;
    uint64_t klen = strlen(key), plen = strlen(ptx), clen = sizeof cubin;
    uint32_t warps = 4;
#define PUT(p, len) (memcpy(buf + n, (p), (len)), n += (len))
    PUT("BLKCACHE", 8), PUT(&klen, 8), PUT(key, klen), PUT(&warps, 4), PUT(&plen, 8), PUT(ptx, plen), PUT(&clen, 8),
        PUT(cubin, clen);
    uint64_t sum = fnv1a(buf, n, 0xcbf29ce484222325ull);
    PUT(&sum, 8);
#undef PUT
    char path[1100];
    blk_cache_path(dir, key, klen, path, sizeof path);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(buf, 1, n, f) == n);
    fclose(f);
    BlkCacheEntry got;
    cr_expect_not(blk_cache_load(dir, key, klen, &got), "an entry without the shared memory must not load");
    /* and storing the entry again replaces it */
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
            cr_expect_arr_eq(got.cubin, e.cubin, e.cubin_len);
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
    int bad_warps[] = {0, -1, 3, 64, 1 << 27};
    for (size_t i = 0; i < sizeof bad_warps / sizeof *bad_warps; i++) {
        BlkCacheEntry e = sample();
        e.warps = bad_warps[i];
        cr_assert(blk_cache_store(dir, key, 1, &e));
        cr_expect_not(blk_cache_load(dir, key, 1, &got), "warps %d loaded", bad_warps[i]);
    }
    BlkCacheEntry e = sample();
    e.shared_bytes = (int64_t)BLK_CACHE_MAX_SHARED + 1;
    cr_assert(blk_cache_store(dir, key, 1, &e));
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "an impossible shared-memory size loaded");
    e = sample();
    unsigned char junk[64] = {1, 2, 3};
    e.cubin = junk, e.cubin_len = sizeof junk;
    cr_assert(blk_cache_store(dir, key, 1, &e));
    cr_expect_not(blk_cache_load(dir, key, 1, &got), "a cubin that is not ELF loaded");
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

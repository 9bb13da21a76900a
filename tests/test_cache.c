/* test_cache.c: the on-disk kernel cache (runtime/cache.c): round trips,
 * misses for another key or a damaged entry, atomic writes from concurrent
 * processes, and the environment variables that place or disable it. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static CacheEntry sample(void) {
    static char ptx[] = ".version 7.8\n.target sm_90\n";
    static unsigned char cubin[300];
    for (size_t i = 0; i < sizeof cubin; i++) cubin[i] = (unsigned char)(i * 7);
    return (CacheEntry){ptx, strlen(ptx), cubin, sizeof cubin, 4};
}

Test(cache, an_entry_round_trips) {
    CacheEntry e = sample(), got;
    const char *key = "blkc 0.1.0\nkernel add\nsource ...";
    cr_assert(cache_store(dir, key, strlen(key), &e));
    cr_assert(cache_load(dir, key, strlen(key), &got));
    cr_expect_eq(got.ptx_len, e.ptx_len);
    cr_expect_str_eq(got.ptx, e.ptx);
    cr_expect_eq(got.cubin_len, e.cubin_len);
    cr_expect_arr_eq(got.cubin, e.cubin, e.cubin_len);
    cr_expect_eq(got.warps, 4);
    cache_entry_free(&got);
    cr_expect_not(cache_load(dir, "another key", 11, &got), "a different key misses");
}

Test(cache, damaged_entries_are_misses) {
    CacheEntry e = sample(), got;
    const char *key = "k";
    char path[1100];
    cache_path(dir, key, 1, path, sizeof path);
    cr_assert(cache_store(dir, key, 1, &e));
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    /* a flipped byte in the cubin */
    f = fopen(path, "r+b");
    fseek(f, size - 20, SEEK_SET);
    fputc('X', f);
    fclose(f);
    cr_expect_not(cache_load(dir, key, 1, &got), "a corrupt entry must not load");
    /* rebuilt, then truncated */
    cr_assert(cache_store(dir, key, 1, &e));
    cr_assert(cache_load(dir, key, 1, &got));
    cache_entry_free(&got);
    cr_assert_eq(truncate(path, size / 2), 0);
    cr_expect_not(cache_load(dir, key, 1, &got), "a truncated entry must not load");
    cr_assert_eq(truncate(path, 0), 0);
    cr_expect_not(cache_load(dir, key, 1, &got), "an empty entry must not load");
}

Test(cache, concurrent_writers_leave_a_whole_entry) {
    CacheEntry e = sample(), got;
    const char *key = "shared";
    pid_t kids[8];
    for (int i = 0; i < 8; i++) {
        kids[i] = fork();
        cr_assert(kids[i] >= 0);
        if (kids[i] == 0) {
            for (int rep = 0; rep < 50; rep++) cache_store(dir, key, strlen(key), &e);
            _exit(0);
        }
    }
    for (int i = 0; i < 50; i++) {
        /* a reader during the writes sees no entry or a whole one, never a torn one */
        if (cache_load(dir, key, strlen(key), &got)) {
            cr_expect_arr_eq(got.cubin, e.cubin, e.cubin_len);
            cache_entry_free(&got);
        }
    }
    for (int i = 0; i < 8; i++) waitpid(kids[i], NULL, 0);
    cr_expect(cache_load(dir, key, strlen(key), &got));
    cache_entry_free(&got);
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
    cr_expect_str_eq(cache_dir(buf, sizeof buf), want);
    cr_expect_eq(access(want, W_OK), 0, "created with its parents");
    setenv("BLK_CACHE_DISABLE", "1", 1);
    cr_expect_null(cache_dir(buf, sizeof buf));
    unsetenv("BLK_CACHE_DISABLE");
    unsetenv("BLK_CACHE_DIR");
    setenv("HOME", dir, 1);
    snprintf(want, sizeof want, "%s/.cache/blk", dir);
    cr_expect_str_eq(cache_dir(buf, sizeof buf), want);
}

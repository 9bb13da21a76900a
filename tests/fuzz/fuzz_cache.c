/* libFuzzer harness for the disk cache's reader: each input becomes the cache
 * entry file for one key, which blk_cache_load must read as a miss or as a
 * valid entry; a valid one, stored again, must give back the same bytes
 * (the reader accepts exactly what the writer writes). Structure-aware: a
 * first byte with bit 0 clear builds the entry from fields (magic, key,
 * warps, shared bytes, PTX, tensor maps, checksum: each right or, as the flag
 * bits say, wrong), so inputs get past the checksum to the field checks;
 * with bit 0 set the rest is the file as it is (bit 1: its last 8 bytes
 * replaced by a correct checksum). Build: CC=clang-19 cmake -B build-fuzz
 * -DBLK_FUZZ=ON. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "blkc.h"

static const char KEY[] = "fuzz key: sm_90, 4 warps";

static uint64_t fnv1a(const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

typedef struct {
    unsigned char *p;
    size_t len, cap;
} Bytes;

static void put(Bytes *b, const void *p, size_t n) {
    if (n == 0) return;
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void put_u64(Bytes *b, uint64_t v) { put(b, &v, 8); }

/* Takes n bytes of the input (fewer at its end). */
static const uint8_t *take(const uint8_t **data, size_t *size, size_t n, size_t *got) {
    const uint8_t *p = *data;
    *got = n < *size ? n : *size;
    *data += *got;
    *size -= *got;
    return p;
}

static uint64_t take_u64(const uint8_t **data, size_t *size) {
    uint64_t v = 0;
    size_t got;
    const uint8_t *p = take(data, size, 8, &got);
    memcpy(&v, p, got);
    return v;
}

/* A tensor map's eleven fields on disk from 88 bytes of the input: masked into
 * their ranges, so that most maps are valid and the fuzzer reaches what
 * follows them, unless raw. */
static void put_map(Bytes *b, bool raw, const uint8_t **data, size_t *size) {
    uint64_t f[11];
    for (int i = 0; i < 11; i++) f[i] = take_u64(data, size);
    if (!raw) {
        f[0] %= BLK_MAX_KERNEL_ARGS;
        f[1] %= BLK_MAX_KERNEL_ARGS + 1; /* the stride parameter + 1; 0: none */
        f[2] = 1 + f[2] % ((uint64_t)1 << 38);
        f[10] = 1 + f[10] % 2; /* the element's bytes */
        f[3] = (16 / f[10]) << (f[3] % 4); /* rows of 16 to 128 bytes */
        f[4] = 8 * (1 + f[4] % 32);
        f[5] = f[3] * f[10] == 16 ? 0 : f[3] * f[10];
        f[6] %= BLK_MAX_KERNEL_ARGS + 1; /* the bounds' parameters + 1 and scales (up to 2^32 either way) */
        f[7] = (uint64_t)((int64_t)(f[7] % (((uint64_t)1 << 33) + 1)) - ((int64_t)1 << 32));
        f[8] %= BLK_MAX_KERNEL_ARGS + 1;
        f[9] = (uint64_t)((int64_t)(f[9] % (((uint64_t)1 << 33) + 1)) - ((int64_t)1 << 32));
    }
    put(b, f, sizeof f);
}

/* An entry from fields. flags: bit 1 the previous format's magic, bit 2 a
 * wrong key, bit 3 a wrong checksum, bit 4 lengths and the map count from
 * the input instead of the true ones, bit 5 the maps' fields as the input
 * has them, unmasked. */
static void build_entry(Bytes *b, uint8_t flags, const uint8_t *data, size_t size) {
    put(b, flags & 2 ? "BLKC0004" : "BLKC0005", 8);
    const char *key = flags & 4 ? "another key" : KEY;
    put_u64(b, strlen(key));
    put(b, key, strlen(key));
    uint32_t warps = (uint32_t)take_u64(&data, &size);
    put(b, &warps, 4);
    put_u64(b, take_u64(&data, &size) & (flags & 16 ? UINT64_MAX : 0x1fffff)); /* shared bytes */
    uint64_t ptx_len_field = take_u64(&data, &size);
    size_t ptx_len = size ? data[0] : 0, got;
    if (size) data++, size--;
    const uint8_t *ptx = take(&data, &size, ptx_len, &got);
    put_u64(b, flags & 16 ? ptx_len_field : got);
    put(b, ptx, got);
    /* up to one map more than the reader accepts */
    size_t nmaps = size ? data[0] % (NVPTX_MAX_TENSOR_MAPS + 2) : 0;
    if (size) data++, size--;
    uint64_t count_field = take_u64(&data, &size);
    put_u64(b, flags & 16 ? count_field : nmaps);
    for (size_t i = 0; i < nmaps; i++) put_map(b, flags & 32, &data, &size);
    uint64_t sum = fnv1a(b->p, b->len) ^ (flags & 8 ? 1 : 0);
    put_u64(b, sum);
}

static bool write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static unsigned char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    Bytes b = {0};
    unsigned char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) put(&b, chunk, got);
    fclose(f);
    *n = b.len;
    return b.p;
}

/* A map as the reader may hand it out (cache.c's map_ok, on the loaded
 * fields): a launch makes a CUtensorMap of exactly these. */
static bool map_valid(const NvptxTensorMap *m) {
    int inner = m->box_inner, swizzle = m->swizzle_bytes, es = m->elem_bytes, row = inner * es;
    return m->base_param >= 0 && m->base_param < BLK_MAX_KERNEL_ARGS && m->stride_param >= -1 &&
           m->stride_param < BLK_MAX_KERNEL_ARGS && m->stride_scale >= 1 && m->stride_scale <= (int64_t)1 << 38 &&
           (es == 1 || es == 2) && (row == 16 || row == 32 || row == 64 || row == 128) && m->box_rows >= 8 &&
           m->box_rows <= 256 && m->box_rows % 8 == 0 && (swizzle == 0 ? row == 16 : swizzle == row) && m->rows_param >= -1 &&
           m->rows_param < BLK_MAX_KERNEL_ARGS && m->cols_param >= -1 && m->cols_param < BLK_MAX_KERNEL_ARGS &&
           m->rows_scale >= -((int64_t)1 << 32) && m->rows_scale <= (int64_t)1 << 32 &&
           m->cols_scale >= -((int64_t)1 << 32) && m->cols_scale <= (int64_t)1 << 32;
}

static char dir[64], again[80];

static void remove_dirs(void) {
    char path[1100];
    blk_cache_path(again, KEY, strlen(KEY), path, sizeof path);
    unlink(path);
    rmdir(again);
    blk_cache_path(dir, KEY, strlen(KEY), path, sizeof path);
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/blk-fuzz-cache-XXXXXX");
        if (!mkdtemp(dir)) abort();
        snprintf(again, sizeof again, "%s/again", dir);
        if (mkdir(again, 0700) != 0) abort();
        atexit(remove_dirs);
    }
    if (size == 0) return 0;
    Bytes file = {0};
    uint8_t flags = data[0];
    if (flags & 1) {
        put(&file, data + 1, size - 1);
        if ((flags & 2) && file.len >= 16) {
            uint64_t sum = fnv1a(file.p, file.len - 8);
            memcpy(file.p + file.len - 8, &sum, 8);
        }
    } else {
        build_entry(&file, flags, data + 1, size - 1);
    }
    char path[1100];
    blk_cache_path(dir, KEY, strlen(KEY), path, sizeof path);
    if (!write_file(path, file.p ? file.p : (unsigned char *)"", file.len)) abort();
    BlkCacheEntry e;
    if (blk_cache_load(dir, KEY, strlen(KEY), &e)) {
        /* what was accepted is a valid entry */
        if (e.warps < 1 || e.warps > 32 || e.shared_bytes < 0 ||
            (uint64_t)e.shared_bytes > BLK_CACHE_MAX_SHARED || strlen(e.ptx) != e.ptx_len ||
            e.tensor_maps.count < 0 || e.tensor_maps.count > NVPTX_MAX_TENSOR_MAPS)
            abort();
        for (int i = 0; i < e.tensor_maps.count; i++)
            if (!map_valid(&e.tensor_maps.map[i])) abort();
        /* and exactly what the writer writes for it */
        if (!blk_cache_store(again, KEY, strlen(KEY), &e)) abort();
        char path2[1100];
        blk_cache_path(again, KEY, strlen(KEY), path2, sizeof path2);
        size_t n = 0;
        unsigned char *round = read_file(path2, &n);
        if (!round || n != file.len || memcmp(round, file.p, n) != 0) abort();
        free(round);
        blk_cache_entry_free(&e);
    }
    free(file.p);
    return 0;
}

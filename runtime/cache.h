/* cache.h: the on-disk kernel cache: PTX and what a launch needs to know per
 * key, in $BLK_CACHE_DIR (default ~/.cache/blk; BLK_CACHE_DISABLE=1 turns it
 * off). Entries are written atomically (temporary file, then rename), carry
 * their whole key and a checksum, and a truncated, corrupt or colliding
 * entry reads as a miss, so it is rebuilt. */
#ifndef BLK_CACHE_H
#define BLK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvptx/nvptx.h"

typedef struct {
    char *ptx;
    size_t ptx_len;
    int warps;            /* the launch's block is 32 x warps threads */
    int64_t shared_bytes; /* the launch's dynamic shared memory */
    NvptxTensorMaps tensor_maps; /* the TMA maps a launch makes */
} BlkCacheEntry;

/* What an entry may hold: larger files are not read, larger shared-memory
 * sizes are not believed (no GPU has 1 MiB of shared memory per block). */
#define BLK_CACHE_MAX_ENTRY ((int64_t)256 << 20)
#define BLK_CACHE_MAX_SHARED ((uint64_t)1 << 20)

/* The cache directory (created if needed), or NULL when the cache is off or
 * unusable; *too_long is set when the path does not fit buf (an error for the
 * caller to report: a cut path would name another directory). */
const char *blk_cache_dir(char *buf, size_t size, bool *too_long);
/* Why the calling thread's last blk_cache_dir returned NULL ("" when the
 * cache is off, or it did not): a path that is no directory, cannot be
 * made, is too long, or no HOME. */
const char *blk_cache_dir_problem(void);
/* A valid entry for exactly this key, malloc'ed into out; false on a miss. */
bool blk_cache_load(const char *dir, const char *key, size_t key_len, BlkCacheEntry *out);
/* Also removes, at a process's first store, temporary files of stores that
 * never finished (a writer killed) once they are an hour old. */
bool blk_cache_store(const char *dir, const char *key, size_t key_len, const BlkCacheEntry *entry);
void blk_cache_entry_free(BlkCacheEntry *e);
/* The file an entry lives in (for tests and tools). */
void blk_cache_path(const char *dir, const char *key, size_t key_len, char *buf, size_t size);

#endif

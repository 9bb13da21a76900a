/* handles.c: the live contexts, modules and kernels (device.h), so that the
 * API can answer a destroyed or foreign handle with an error instead of
 * reading freed memory: a double destroy is a no-op, a call on a destroyed
 * handle is BLK_ERROR_INVALID_VALUE. One open-addressing hash set of
 * addresses under a mutex: a lookup costs a few tens of nanoseconds next to
 * a launch's microseconds. What stays undefined (docs/runtime.md): a handle
 * destroyed in one thread while another uses it, and a stale handle whose
 * address a new object of the same kind took. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "device.h"

typedef struct {
    uintptr_t addr; /* 0: empty; TOMBSTONE: removed */
    int kind;
} Slot;

enum { TOMBSTONE = 1 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Slot *slots;
static size_t cap, used, live_count; /* used counts tombstones too: they lengthen probes until a rebuild */

static size_t hash(uintptr_t a) {
    uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ h >> 32);
}

/* The slot of a, or the empty one where it would go. */
static Slot *find(uintptr_t a) {
    Slot *free_slot = NULL;
    for (size_t i = hash(a) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (slots[i].addr == a) return &slots[i];
        if (slots[i].addr == TOMBSTONE && !free_slot) free_slot = &slots[i];
        if (slots[i].addr == 0) return free_slot ? free_slot : &slots[i];
    }
}

static bool rebuild(size_t new_cap) {
    Slot *old = slots;
    size_t old_cap = cap;
    Slot *fresh = calloc(new_cap, sizeof *fresh);
    if (!fresh) return false;
    slots = fresh, cap = new_cap, used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].addr > TOMBSTONE) {
            *find(old[i].addr) = old[i];
            used++;
        }
    free(old);
    return true;
}

bool blk_handle_add(const void *p, BlkHandleKind kind) {
    pthread_mutex_lock(&lock);
    size_t want = 64; /* rebuilt to four times the live handles: tombstones never pile up */
    while (want < 4 * (live_count + 1)) want *= 2;
    bool ok = (used + 1) * 2 <= cap || rebuild(want);
    if (ok) {
        Slot *s = find((uintptr_t)p);
        if (s->addr != (uintptr_t)p) used += s->addr == 0, live_count++;
        *s = (Slot){(uintptr_t)p, (int)kind};
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

bool blk_handle_remove(const void *p, BlkHandleKind kind) {
    pthread_mutex_lock(&lock);
    bool was = false;
    if (cap && (uintptr_t)p > TOMBSTONE) {
        Slot *s = find((uintptr_t)p);
        was = s->addr == (uintptr_t)p && s->kind == (int)kind;
        if (was) s->addr = TOMBSTONE, live_count--;
    }
    pthread_mutex_unlock(&lock);
    return was;
}

bool blk_handle_live(const void *p, BlkHandleKind kind) {
    if ((uintptr_t)p <= TOMBSTONE) return false;
    pthread_mutex_lock(&lock);
    bool live = false;
    if (cap) {
        Slot *s = find((uintptr_t)p);
        live = s->addr == (uintptr_t)p && s->kind == (int)kind;
    }
    pthread_mutex_unlock(&lock);
    return live;
}

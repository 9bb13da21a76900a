/* arena.c: bump allocation for one compilation. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

struct ArenaChunk {
    ArenaChunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_CHUNK_MIN = 64 * 1024 };

_Thread_local long blk_arena_fail_countdown;

void *arena_alloc(Arena *a, size_t size) {
    size = (size + 15) & ~(size_t)15;
    ArenaChunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > ARENA_CHUNK_MIN ? size : ARENA_CHUNK_MIN;
        bool inject = blk_arena_fail_countdown > 0 && --blk_arena_fail_countdown == 0;
        c = inject ? NULL : malloc(sizeof(ArenaChunk) + cap);
        if (!c) {
            /* back to the pass that owns the arena, which reports it; a
             * library never ends the process of its caller */
            if (a->on_oom) longjmp(*a->on_oom, 1);
            abort(); /* an arena without a handler is a compiler bug */
        }
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void arena_free(Arena *a) {
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

void ptrvec_push(Arena *a, PtrVec *v, void *item) {
    if (v->len == v->cap) {
        int cap = v->cap ? v->cap * 2 : 4;
        void **items = arena_alloc(a, sizeof(void *) * (size_t)cap);
        if (v->len) memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = item;
}

/* build_id.c: the identity of the running build of blk, for the runtime's
 * disk cache key and blkc --version. BLKC_VERSION changes only at a
 * release, but the compiler's output changes with every build of it (code
 * generation, the parameters a launch passes), so a cache entry another
 * build wrote must read as a miss. The identity is the GNU build-id (a hash
 * the linker writes of the linked code) of the object this code is linked
 * into: blkc, libblk.so, or the program that links libblk.a (then
 * rebuilding the program alone misses too, which costs a compile, never a
 * wrong kernel). */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"

enum { NOTE_GNU_BUILD_ID = 3 };

typedef struct {
    uintptr_t addr; /* an address inside the object sought */
    char *buf;
    size_t size;
    bool found;
} Search;

static size_t aligned4(size_t n) { return (n + 3) & ~(size_t)3; }

/* The build-id note among the notes of one PT_NOTE segment, as hex. */
static bool note_id(const unsigned char *p, size_t len, char *buf, size_t size) {
    while (len >= sizeof(ElfW(Nhdr))) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
        size_t name = aligned4(n->n_namesz), desc = aligned4(n->n_descsz), whole = sizeof *n + name + desc;
        if (whole > len) return false;
        const unsigned char *id = p + sizeof *n + name;
        if (n->n_type == NOTE_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(p + sizeof *n, "GNU", 4) == 0 &&
            n->n_descsz > 0 && 2 * (size_t)n->n_descsz < size) {
            for (size_t i = 0; i < n->n_descsz; i++) snprintf(buf + 2 * i, 3, "%02x", id[i]);
            return true;
        }
        p += whole, len -= whole;
    }
    return false;
}

static int visit(struct dl_phdr_info *info, size_t info_size, void *data) {
    (void)info_size;
    Search *s = data;
    bool inside = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t at = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && s->addr >= at && s->addr - at < ph->p_memsz) inside = true;
    }
    if (!inside) return 0;
    for (int i = 0; i < info->dlpi_phnum && !s->found; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            s->found = note_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz, s->buf, s->size);
    }
    return 1; /* the object holding this code: stop, found or not */
}

bool blk_build_id(char *buf, size_t size) {
    Search s = {(uintptr_t)&blk_build_id, buf, size, false};
    dl_iterate_phdr(visit, &s);
    if (!s.found && size) snprintf(buf, size, "none");
    return s.found;
}

/* target.c: the architectures blkc emits code for, in one table, and the
 * occupancy a kernel is built for on them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvptx.h"

/* Shared memory per program is each GPU's opt-in maximum; per SM, warps and
 * programs: the CUDA programming guide's "Technical Specifications per
 * Compute Capability". TMA is sm_90's too, but blkc's copies need PTX 8.0,
 * which only sm_90a's row asks for. */
static const NvptxArch archs[] = {
    {"sm_80", 80, false, false, false, false, false, "+ptx70", 163 * 1024, 164 * 1024, 64, 32},
    {"sm_86", 86, false, false, false, false, false, "+ptx71", 99 * 1024, 100 * 1024, 48, 16},
    {"sm_89", 89, false, false, false, false, false, "+ptx78", 99 * 1024, 100 * 1024, 48, 24},
    {"sm_90", 90, false, false, false, true, true, "+ptx78", 227 * 1024, 228 * 1024, 64, 32},
    {"sm_90a", 90, true, true, true, true, true, "+ptx80", 227 * 1024, 228 * 1024, 64, 32},
};
enum { NARCHS = sizeof archs / sizeof archs[0] };

int nvptx_ptx_isa(const NvptxArch *a) { return atoi(a->ptx_features + 4); }

bool nvptx_launches_after_previous(const NvptxArch *a, const BirFunction *f) {
    return a && a->grid_dependency && bir_waits_on_grid(f);
}

const NvptxArch *nvptx_arch(const char *name) {
    for (int i = 0; name && i < NARCHS; i++)
        if (strcmp(archs[i].name, name) == 0) return &archs[i];
    return NULL;
}

const char *nvptx_arch_names(char *buf, size_t size) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < NARCHS && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", i == 0 ? "" : i == NARCHS - 1 ? " or " : ", ", archs[i].name);
    return buf;
}

const NvptxArch *nvptx_arch_for_device(int major, int minor) {
    const NvptxArch *best = NULL;
    int cc = major * 10 + minor;
    for (int i = 0; i < NARCHS; i++) {
        /* an arch-specific row (sm_90a) only for its own GPU, where it wins */
        bool fits = archs[i].arch_specific ? archs[i].sm == cc : archs[i].sm <= cc;
        if (fits && (!best || archs[i].sm > best->sm || (archs[i].sm == best->sm && archs[i].arch_specific)))
            best = &archs[i];
    }
    return best;
}

int nvptx_registers_for(int64_t sm_registers, int programs, int warps) {
    if (programs < 1 || warps < 1) return 255;
    int64_t regs = sm_registers / ((int64_t)programs * warps * 256) * 8;
    return regs > 255 ? 255 : (int)regs;
}

int nvptx_occupancy_target(int64_t sm_registers, int programs, int most, int warps, int regs, int min_regs,
                           bool persistent) {
    int more = nvptx_registers_for(sm_registers, programs + 1, warps);
    int over = persistent ? more / 3 : 8;
    if (programs >= 1 && programs < most && regs <= more + over && more >= min_regs) return programs + 1;
    if (programs < 2) return 0;
    int now = nvptx_registers_for(sm_registers, programs, warps);
    return now >= (regs + 7) / 8 * 8 + 8 && now >= min_regs ? programs : 0;
}

int nvptx_sm_shares(const NvptxArch *a, int warps, int regs, int64_t shared, NvptxSmShare share[NVPTX_SM_RESOURCES]) {
    int64_t warp_regs = ((int64_t)regs * 32 + 255) / 256 * 256; /* allocated 256 at a time a warp */
    share[NVPTX_SHARE_PROGRAMS] = (NvptxSmShare){"programs", 1, a->sm_programs, 0};
    share[NVPTX_SHARE_WARPS] = (NvptxSmShare){"warps", warps, a->sm_warps, 0};
    share[NVPTX_SHARE_REGISTERS] = (NvptxSmShare){"registers", warp_regs * warps, NVPTX_SM_REGISTERS, 0};
    share[NVPTX_SHARE_SHARED] = (NvptxSmShare){"shared memory", shared ? shared + 1024 : 0, a->sm_shared_bytes, 0};
    int limit = 0;
    for (int i = 0; i < NVPTX_SM_RESOURCES; i++) {
        share[i].allows = share[i].used ? (int)(share[i].total / share[i].used) : a->sm_programs;
        if (share[i].allows < share[limit].allows) limit = i;
    }
    return limit;
}

int nvptx_programs_per_sm(const NvptxArch *a, int warps, int regs, int64_t shared, const char **limit) {
    NvptxSmShare share[NVPTX_SM_RESOURCES];
    int i = nvptx_sm_shares(a, warps, regs, shared, share);
    if (limit) *limit = share[i].what;
    return share[i].allows;
}

char *nvptx_with_occupancy_target(const char *ptx, int target) {
    /* the directive stands right after .maxntid (kernel.c's annotations); a
     * kernel that has it already has a producer warpgroup, whose target
     * decides its code (warpspec.c) */
    const char *entry = strstr(ptx, ".entry ");
    if (target < 1 || !entry || strstr(entry + 1, ".entry ") || strstr(ptx, ".minnctapersm")) return NULL;
    /* a bulk reduction's stagings are planned under the target (bulk.c): built again */
    if (strstr(ptx, "cp.reduce.async.bulk")) return NULL;
    const char *at = strstr(entry, "\n.maxntid ");
    const char *end = at ? strchr(at + 1, '\n') : NULL;
    if (!end) return NULL;
    size_t head = (size_t)(end + 1 - ptx), tail = strlen(end + 1);
    char line[32];
    int n = snprintf(line, sizeof line, ".minnctapersm %d\n", target);
    char *out = malloc(head + (size_t)n + tail + 1);
    if (!out) return NULL;
    memcpy(out, ptx, head);
    memcpy(out + head, line, (size_t)n);
    memcpy(out + head + n, end + 1, tail + 1);
    return out;
}

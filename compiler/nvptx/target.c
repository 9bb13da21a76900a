/* target.c: the architectures blkc emits code for, in one table. */
#include <stdio.h>
#include <string.h>

#include "nvptx.h"

/* Shared memory per program is each GPU's opt-in maximum (CUDA programming
 * guide, "Technical Specifications per Compute Capability"). */
static const NvptxArch archs[] = {
    {"sm_80", 80, false, "+ptx70", 163 * 1024},
    {"sm_86", 86, false, "+ptx71", 99 * 1024},
    {"sm_89", 89, false, "+ptx78", 99 * 1024},
    {"sm_90", 90, false, "+ptx78", 227 * 1024},
    {"sm_90a", 90, true, "+ptx80", 227 * 1024},
};
enum { NARCHS = sizeof archs / sizeof archs[0] };

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
    for (int i = 0; i < NARCHS; i++)
        if (!archs[i].arch_specific && archs[i].sm <= major * 10 + minor && (!best || archs[i].sm > best->sm))
            best = &archs[i];
    return best;
}

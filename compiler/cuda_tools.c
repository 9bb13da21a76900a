/* cuda_tools.c: finding and running CUDA's ptxas, nvdisasm and cuobjdump for
 * the CLI's --stats, its occupancy target and the explore pages (cuda_tools.h). */
#define _POSIX_C_SOURCE 200809L
#include "cuda_tools.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where a tool is, looked for where cuda_tool says; NULL for nowhere. */
static const char *look_for(const char *name, char path[static 512]) {
    char var[64] = "BLKC_";
    for (size_t i = 0; name[i] && i + 6 < sizeof var; i++) var[5 + i] = (char)toupper((unsigned char)name[i]);
    const char *chosen = getenv(var);
    if (chosen) { /* quotes would break the command line it goes into */
        if (!chosen[0] || strchr(chosen, '\'') || access(chosen, X_OK) != 0) return NULL;
        snprintf(path, 512, "%s", chosen);
        return path;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s > /dev/null 2>&1", name);
    if (system(cmd) == 0) return strcpy(path, name);
    snprintf(path, 512, "/usr/local/cuda/bin/%s", name);
    return access(path, X_OK) == 0 ? path : NULL;
}

const char *cuda_tool(const char *name) {
    /* each tool looked for once a process, under a lock (the runtime's
     * explore pages may ask from several threads); a found path never changes */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        char name[16], path[512];
        const char *found;
    } tools[4];
    const char *found = NULL;
    pthread_mutex_lock(&lock);
    int slot = 0;
    while (slot < 4 && tools[slot].name[0] && strcmp(tools[slot].name, name) != 0) slot++;
    if (slot == 4) { /* more tools than slots: not kept */
        static char spare[512];
        found = look_for(name, spare);
    } else {
        if (!tools[slot].name[0]) {
            snprintf(tools[slot].name, sizeof tools[slot].name, "%s", name);
            tools[slot].found = look_for(name, tools[slot].path);
        }
        found = tools[slot].found;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

/* `ptxas -v` over ptx, its report to read from the stream returned (NULL on
 * failure); with cubin, the cubin too. *ptx_path names the temporary file
 * ptxas_close removes. */
static FILE *ptxas_open(const char *ptxas, const char *ptx, const char *arch, const char *cubin,
                        char ptx_path[static 32]) {
    snprintf(ptx_path, 32, "/tmp/blkc-ptxas-XXXXXX");
    int fd = mkstemp(ptx_path);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    size_t len = strlen(ptx);
    bool ok = f && fwrite(ptx, 1, len, f) == len;
    if (f ? fclose(f) != 0 : close(fd) != 0) ok = false;
    char cmd[1024];
    if (cubin)
        snprintf(cmd, sizeof cmd, "'%s' -arch=%s -v -lineinfo -o '%s' %s 2>&1", ptxas, arch, cubin, ptx_path);
    else
        snprintf(cmd, sizeof cmd, "'%s' -arch=%s -v -o /dev/null %s 2>&1", ptxas, arch, ptx_path);
    FILE *p = ok ? popen(cmd, "r") : NULL;
    if (!p) unlink(ptx_path);
    return p;
}

/* False when ptxas failed. */
static bool ptxas_close(FILE *report, const char *ptx_path) {
    bool ok = pclose(report) == 0;
    unlink(ptx_path);
    return ok;
}


/* A command's whole standard output (malloc'ed), or NULL when it fails. */
static char *output_of(const char *cmd) {
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    char buf[8192];
    bool ok = true;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
        if (!ok) continue; /* out of memory: read to the end all the same (the tool must not block) */
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *grown = realloc(text, cap);
            if (!grown) ok = false;
            else text = grown;
        }
        if (ok) memcpy(text + len, buf, n), len += n;
    }
    if (pclose(p) != 0 || !ok || !text) {
        free(text);
        return NULL;
    }
    text[len] = 0;
    return text;
}

char *cuda_sass(const char *cubin, const char **tool) {
    static const struct {
        const char *name, *args;
    } disassemblers[] = {{"nvdisasm", "-g -c"}, {"cuobjdump", "-sass"}};
    for (size_t i = 0; i < sizeof disassemblers / sizeof *disassemblers; i++) {
        const char *path = cuda_tool(disassemblers[i].name);
        if (!path) continue;
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>/dev/null", path, disassemblers[i].args, cubin);
        char *sass = output_of(cmd);
        if (sass) {
            *tool = disassemblers[i].name;
            return sass;
        }
    }
    return NULL;
}

void ptxas_report_free(KernelResources *kernels, int n) {
    for (int i = 0; kernels && i < n; i++) free(kernels[i].kernel), free(kernels[i].advice);
    free(kernels);
}

/* Appends text to a malloc'ed string (kept as it was when out of memory). */
static void append(char **to, const char *text) {
    size_t had = *to ? strlen(*to) : 0, n = strlen(text);
    char *grown = realloc(*to, had + n + 1);
    if (!grown) return;
    memcpy(grown + had, text, n + 1);
    *to = grown;
}

bool ptxas_report(const char *ptxas, const char *ptx, const char *arch, const char *cubin, KernelResources **kernels,
                  int *n, char **errors) {
    char path[32];
    *kernels = NULL, *n = 0, *errors = calloc(1, 1);
    FILE *p = ptxas_open(ptxas, ptx, arch, cubin, path);
    bool ok = p && *errors;
    char line[512], kernel[256] = "", *advice = NULL;
    int cap = 0;
    unsigned stack = 0, spill_st = 0, spill_ld = 0, regs;
    while (p && fgets(line, sizeof line, p)) {
        char *at;
        if ((at = strstr(line, ": (C")) && line[strlen(line) - 1] == '\n') {
            /* ptxas's numbered advisories (wgmma serialized, a warpgroup.arrive
             * or wait injected, setmaxnreg ignored): silent costs, said with
             * the kernel's summary that follows them */
            append(&advice, "  ptxas: ");
            append(&advice, at + 2);
        } else if ((at = strstr(line, "Compiling entry function '"))) {
            sscanf(at + 26, "%255[^']", kernel);
        } else if (sscanf(line, " %u bytes stack frame, %u bytes spill stores, %u bytes spill loads", &stack,
                          &spill_st, &spill_ld) == 3) {
            /* remembered for the Used line that follows */
        } else if ((at = strstr(line, "Used ")) && sscanf(at, "Used %u registers", &regs) == 1) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 8;
                KernelResources *grown = realloc(*kernels, (size_t)cap * sizeof *grown);
                if (!grown) { /* out of memory: read on (ptxas must not block on a full pipe), keep nothing */
                    ok = false, cap = *n;
                    continue;
                }
                *kernels = grown;
            }
            char *name = malloc(strlen(kernel) + 1), *said = advice ? advice : calloc(1, 1);
            if (!name || !said) { /* out of memory: no entry with a NULL in it; read on */
                free(name), free(said);
                advice = NULL, ok = false;
                continue;
            }
            strcpy(name, kernel);
            (*kernels)[(*n)++] = (KernelResources){name, (int)regs, (int)spill_st, (int)spill_ld, (int)stack, said};
            advice = NULL, stack = spill_st = spill_ld = 0;
        } else if (strstr(line, "error   :") || strncmp(line, "ptxas fatal", 11) == 0) {
            /* ptxas's errors, not a kernel whose name holds "error" (its info lines) */
            append(errors, line);
            ok = false;
        }
    }
    free(advice);
    if (p && !ptxas_close(p, path)) ok = false;
    return ok;
}

void cuda_explore_facts(const char *ptx, const char *arch, KernelResources **kernels, int *n, char **sass,
                        const char **sass_tool, char **failed) {
    *kernels = NULL, *n = 0, *sass = NULL, *sass_tool = NULL, *failed = NULL;
    const char *ptxas = cuda_tool("ptxas");
    char cubin[32] = "/tmp/blkc-cubin-XXXXXX", *errors = NULL;
    int fd = ptxas ? mkstemp(cubin) : -1;
    if (fd < 0) return;
    close(fd);
    if (ptxas_report(ptxas, ptx, arch, cubin, kernels, n, &errors)) {
        *sass = cuda_sass(cubin, sass_tool);
        free(errors);
    } else { /* extra facts: a failure leaves them out, and says why */
        ptxas_report_free(*kernels, *n);
        *kernels = NULL, *n = 0;
        static const char head[] = "ptxas failed on this PTX, so registers, spills and SASS are left out:\n";
        size_t len = errors ? strlen(errors) : 0;
        if ((*failed = malloc(sizeof head + len))) {
            memcpy(*failed, head, sizeof head);
            if (len) memcpy(*failed + sizeof head - 1, errors, len + 1);
        }
        free(errors);
    }
    unlink(cubin);
}

bool ptxas_usage(const char *ptxas, const char *ptx, const char *arch, int *regs, int *stack) {
    KernelResources *report;
    int n;
    char *errors;
    bool ok = ptxas_report(ptxas, ptx, arch, NULL, &report, &n, &errors) && n > 0;
    *regs = ok ? report[n - 1].registers : -1, *stack = ok ? report[n - 1].stack : 0; /* (the one kernel) */
    free(errors);
    ptxas_report_free(report, n);
    return ok;
}

/* cuda_tools.h: CUDA's command-line tools, where they are installed, as blkc
 * and the runtime's explore pages run them: ptxas (registers, spills, a cubin)
 * and nvdisasm or cuobjdump (the cubin's SASS). Each is extra: a missing tool leaves its facts out. */
#ifndef BLK_CUDA_TOOLS_H
#define BLK_CUDA_TOOLS_H

#include <stdbool.h>
#include <stdio.h>

#include "compile.h"

/* A tool by name ("ptxas", "nvdisasm", "cuobjdump"): $BLKC_<NAME> (a path;
 * set but empty: none), else the PATH's, else /usr/local/cuda/bin's; NULL
 * when none. */
const char *cuda_tool(const char *name);
/* The registers a thread and the stack bytes ptxas gives the one kernel of
 * ptx; false when ptxas fails. */
bool ptxas_usage(const char *ptxas, const char *ptx, const char *arch, int *regs, int *stack);
/* ptxas -v's report over ptx for arch, per kernel (with cubin, a path: also
 * the cubin, with line info for a disassembler), into
 * *kernels[0 .. *n) (ptxas_report_free frees it); ptxas's error lines into
 * *errors (malloc'ed, "" for none). False when ptxas failed. */
bool ptxas_report(const char *ptxas, const char *ptx, const char *arch, const char *cubin, KernelResources **kernels,
                  int *n, char **errors);
void ptxas_report_free(KernelResources *kernels, int n);
/* What the tools installed say of a PTX text for an explore page: ptxas's
 * resources per kernel (*kernels NULL and *n 0 without ptxas or when it
 * fails) and the SASS of its cubin (*sass NULL without a disassembler);
 * *failed (malloc'ed, else NULL) says why when ptxas failed. */
void cuda_explore_facts(const char *ptx, const char *arch, KernelResources **kernels, int *n, char **sass,
                        const char **sass_tool, char **failed);
/* The SASS of a cubin (malloc'ed), from nvdisasm with each instruction's
 * source line (`//## File "x.blk", line N` before the instructions of a
 * line), else from cuobjdump (no lines); *tool says which. NULL when neither
 * is installed or both fail. */
char *cuda_sass(const char *cubin, const char **tool);

#endif

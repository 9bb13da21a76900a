/* launch.h: what a launch of compiled kernels must do, said three ways from
 * one description (contract.c): a comment at the top of the PTX, JSON
 * (blkc --emit=launch), and a C launcher with the PTX embedded (launcher.c,
 * blkc --emit=c / --emit=h). The runtime launches by the same facts
 * (runtime/device_cuda.c); tests/test_launch.c checks that they agree. */
#ifndef BLK_LAUNCH_H
#define BLK_LAUNCH_H

#include <stdio.h>

#include "compile.h"

/* What a launch's argument for one runtime parameter must satisfy: the
 * parameter's declared attributes and the facts the code was compiled
 * under, together. */
typedef struct {
    int64_t align;        /* pointer: its address a multiple of this many bytes (at least its element's size) */
    int64_t multiple;     /* integer: its value a multiple of this (1: any) */
    bool one;             /* integer: its value is 1 */
    bool align_declared;  /* each from the source (@align, @multiple_of, @equal) rather than from the */
    bool multiple_declared; /* launch facts or --assume the code was compiled under */
    bool one_declared;
} LaunchRequirement;

void launch_requirement(const BirParam *p, int64_t fact, LaunchRequirement *r);

/* PTX's and C's spelling of a runtime parameter of type d (".u64",
 * "CUdeviceptr"; f16 and bf16 are ".b16" bits, which a launcher takes as a
 * float and rounds). */
const char *launch_ptx_type(DType d);
const char *launch_c_type(DType d);
/* The bytes of a parameter in the launch's parameter buffer. */
int launch_param_bytes(DType d);
/* cuda.h's name of a tensor map's swizzle of `bytes` (0: none). */
const char *launch_swizzle_name(int bytes);

/* The dynamic shared memory a launch gets without CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. */
enum { LAUNCH_DEFAULT_SHARED_BYTES = 48 * 1024 };

/* One compiled build of a module: the kernels of out, compiled from m for
 * arch under options (for the record). */
typedef struct {
    const BirModule *bir;
    const NvptxOutput *out;
    const char *arch;
    const NvptxOptions *options;
    const ConstDef *defs; /* -D values, for the record */
    int ndefs;
    const char *const *texts; /* each kernel's PTX where each was compiled alone, or NULL: out->text */
} LaunchBuild;

/* The kernel of b.bir that k was compiled from (NULL: none). */
const BirFunction *launch_function(const LaunchBuild *b, const NvptxKernel *k);

/* The contract as PTX comments (every line starting with "//"). */
void launch_contract_comment(FILE *out, const LaunchBuild *b);
/* Read back from a PTX text that starts with that comment: the arch (into
 * arch[size]), or a kernel's block (warps) and dynamic shared memory; false
 * where the comment does not say. */
bool launch_contract_arch(const char *ptx, char *arch, size_t size);
bool launch_contract_kernel(const char *ptx, const char *kernel, int *warps, long long *shared_bytes);
/* The same as one JSON object. */
void launch_contract_json(FILE *out, const LaunchBuild *b);

/* launcher.c: a C launcher for one or more builds of the same module that
 * differ only in the facts they were compiled under (the variants of a
 * kernel: a launch runs the first variant whose facts its arguments
 * satisfy). `header`: the declarations only (--emit=h); else the whole
 * source, its PTX embedded (--emit=c). `prefix` starts every name the file
 * defines ("" for none). False when the builds do not match (other kernels
 * or parameters), with the reason in err. */
bool launch_c_source(FILE *out, const LaunchBuild *builds, int nbuilds, const char *prefix, bool header, char *err,
                     size_t err_size);

/* hints.c: for each kernel compiled (opt->only_kernel, or all), a note at
 * the kernel when another arch or launch facts would give it wgmma dots,
 * TMA copies or wider accesses, naming every option and fact needed. */
void launch_faster_hints(Compilation *c, const NvptxOptions *opt, DiagEngine *de);
/* The launch facts (as NvptxOptions.param_div, into div[f->nparams]) of a
 * tidy launch of kernel f: each pointer 16-byte aligned, each integer a
 * multiple of 16, and 1 where the remarks say a unit stride would make an
 * access contiguous. False when f does not compile under opt. */
bool launch_tidy_facts(Compilation *c, const NvptxOptions *opt, const BirFunction *f, int64_t *div);

#endif

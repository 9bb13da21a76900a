/* launcher.c: a C launcher for compiled kernels (blkc --emit=c, --emit=h),
 * as Triton's ahead-of-time compiler writes one: the PTX embedded, and per
 * kernel a typed function that loads its module once, allows its shared
 * memory, makes its tensor maps, checks the launch's arguments against the
 * facts the code was compiled under, and launches by the contract
 * (contract.c). Several builds of one module that differ in their facts are
 * variants of each kernel: a launch takes the first whose facts its
 * arguments satisfy (Triton's link.py). The file needs cuda.h and libcuda. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "launch.h"

/* Names a C or C++ compiler, cuda.h or the generated body may give meaning to. */
static bool reserved_name(const char *name) {
    static const char *const reserved[] = {
        "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short",
        "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
        "true", "false", "NULL", "nullptr", "constexpr", "typeof", "alignas", "alignof", "thread_local",
        "static_assert", "new", "delete", "class", "this", "template", "typename", "operator", "namespace",
        "private", "public", "protected", "virtual", "friend", "mutable", "explicit", "try", "catch", "throw",
        "and", "or", "not", "xor", "bitand", "bitor", "compl", "stream", "grid_x", "grid_y", "grid_z", "memset",
        "memcpy", "assert", "errno"};
    if (strncmp(name, "blk_", 4) == 0 || name[0] == '_' || strncmp(name, "cu", 2) == 0 || strncmp(name, "CU", 2) == 0)
        return true;
    size_t n = strlen(name);
    if (n > 2 && strcmp(name + n - 2, "_t") == 0) return true; /* int32_t and every other typedef */
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(name, reserved[i]) == 0) return true;
    return false;
}

/* The prototype, for the header and the file: the parameters under their
 * own names where those are safe C identifiers, else the name in a comment
 * (the definition names them blk_p0, blk_p1, ...: nothing can clash). */
static void prototype(FILE *out, const char *prefix, const BirFunction *f) {
    fprintf(out, "CUresult %s%s_launch(CUstream stream", prefix, f->name);
    for (int p = 0; p < f->nparams; p++) {
        const char *name = f->params[p].name, *type = launch_c_type(f->params[p].type.dtype);
        if (reserved_name(name)) fprintf(out, ", %s /* %s */", type, name);
        else fprintf(out, ", %s %s", type, name);
    }
    fputs(", unsigned grid_x, unsigned grid_y, unsigned grid_z)", out);
}

/* The definition's head: positional names. */
static void definition_head(FILE *out, const char *prefix, const BirFunction *f) {
    fprintf(out, "CUresult %s%s_launch(CUstream stream", prefix, f->name);
    for (int p = 0; p < f->nparams; p++)
        fprintf(out, ", %s blk_p%d /* %s */", launch_c_type(f->params[p].type.dtype), p, f->params[p].name);
    fputs(", unsigned grid_x, unsigned grid_y, unsigned grid_z)", out);
}

/* The builds must be variants of one module: the same kernels, in order,
 * with the same parameters. */
static bool builds_match(const LaunchBuild *b, int n, char *err, size_t size) {
    for (int v = 1; v < n; v++) {
        if (b[v].out->nkernels != b[0].out->nkernels) {
            snprintf(err, size, "the variants compile different kernels");
            return false;
        }
        for (int i = 0; i < b[0].out->nkernels; i++) {
            const BirFunction *f = launch_function(&b[0], &b[0].out->kernels[i]);
            const BirFunction *g = launch_function(&b[v], &b[v].out->kernels[i]);
            if (!f || !g || strcmp(f->name, g->name) || f->nparams != g->nparams) {
                snprintf(err, size, "the variants compile different kernels");
                return false;
            }
        }
    }
    return true;
}

static void declarations(FILE *out, const LaunchBuild *b, const char *prefix) {
    for (int i = 0; i < b->out->nkernels; i++) {
        const BirFunction *f = launch_function(b, &b->out->kernels[i]);
        fprintf(out, "\n/* kernel %s: loads its module into the current context on first use (or now, with _load),\n"
                     " * then launches grid_x x grid_y x grid_z programs on stream (launches may come from several\n"
                     " * threads; _unload must not run while one is under way); CUDA_ERROR_INVALID_VALUE, with\n"
                     " * %s%s_last_error() naming the argument, when an argument breaks what the kernel was compiled for. */\n",
                f->name, prefix, f->name);
        fprintf(out, "CUresult %s%s_load(void);\nvoid %s%s_unload(void);\n", prefix, f->name, prefix, f->name);
        fprintf(out, "/* What the last failing call of this launcher on this thread said: the kernel, the\n"
                     " * argument and the fact it breaks, or the CUDA call that failed; \"\" after a success. */\n"
                     "const char *%s%s_last_error(void);\n", prefix, f->name);
        prototype(out, prefix, f);
        fputs(";\n", out);
    }
}

/* The file's helpers, shared by its kernels. */
static void helpers(FILE *out) {
    const char *P = "blk_";
    fprintf(out,
"static _Thread_local char %1$serror_text[1024];\n"
"\n"
"static CUresult %1$sfail(CUresult r, const char *fmt, ...) {\n"
"    va_list ap;\n"
"    va_start(ap, fmt);\n"
"    vsnprintf(%1$serror_text, sizeof %1$serror_text, fmt, ap);\n"
"    va_end(ap);\n"
"    return r;\n"
"}\n"
"\n"
"static CUresult %1$scuda_fail(CUresult r, const char *kernel, const char *what) {\n"
"    const char *text = NULL;\n"
"    if (cuGetErrorString(r, &text) != CUDA_SUCCESS || !text) text = \"unknown CUDA error\";\n"
"    return %1$sfail(r, \"kernel '%%s': %%s: %%s\", kernel, what, text);\n"
"}\n"
"\n"
"/* One build of a kernel, loaded into one context. */\n"
"typedef struct {\n"
"    const char *ptx;\n"
"    long long shared_bytes;\n"
"    int threads;\n"
"    bool persistent;\n"
"    CUmodule module;\n"
"    CUfunction function;\n"
"    unsigned at_once; /* persistent: the programs that run at once */\n"
"} %1$sVariant;\n"
"\n"
"/* A kernel's variants and the context they are loaded in. */\n"
"typedef struct {\n"
"    const char *name;\n"
"    pthread_mutex_t lock;\n"
"    unsigned long long context; /* the id (cuCtxGetId) of the context its variants are loaded in; 0: none */\n"
"    int count;\n"
"    %1$sVariant *variants;\n"
"} %1$sKernel;\n"
"\n"
"static CUresult %1$sload_variant(%1$sKernel *k, %1$sVariant *v) {\n"
"    CUresult r;\n"
"    if ((r = cuModuleLoadData(&v->module, v->ptx)) != CUDA_SUCCESS) {\n"
"        v->module = NULL;\n"
"        return %1$scuda_fail(r, k->name, \"cuModuleLoadData\");\n"
"    }\n"
"    if ((r = cuModuleGetFunction(&v->function, v->module, k->name)) != CUDA_SUCCESS)\n"
"        return %1$scuda_fail(r, k->name, \"cuModuleGetFunction\");\n"
"    if (v->shared_bytes > %2$d &&\n"
"        (r = cuFuncSetAttribute(v->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)v->shared_bytes)) !=\n"
"            CUDA_SUCCESS)\n"
"        return %1$scuda_fail(r, k->name, \"allowing its dynamic shared memory (the device may have less)\");\n"
"    if (v->persistent) {\n"
"        CUdevice dev;\n"
"        int sms = 0, blocks = 0;\n"
"        if ((r = cuCtxGetDevice(&dev)) != CUDA_SUCCESS ||\n"
"            (r = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)) != CUDA_SUCCESS ||\n"
"            (r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v->function, v->threads,\n"
"                                                             (size_t)v->shared_bytes)) != CUDA_SUCCESS)\n"
"            return %1$scuda_fail(r, k->name, \"counting the programs that run at once\");\n"
"        v->at_once = (unsigned)(sms > 0 ? sms : 1) * (unsigned)(blocks > 0 ? blocks : 1);\n"
"    }\n"
"    return CUDA_SUCCESS;\n"
"}\n"
"\n"
"/* Variant i of k, loaded into the current context (which must be the one k's variants are in). */\n"
"static CUresult %1$sfunction(%1$sKernel *k, int i, %1$sVariant **out) {\n"
"    CUcontext current = NULL;\n"
"    CUresult r = cuCtxGetCurrent(&current);\n"
"    if (r != CUDA_SUCCESS) return %1$scuda_fail(r, k->name, \"cuCtxGetCurrent\");\n"
"    if (!current)\n"
"        return %1$sfail(CUDA_ERROR_INVALID_CONTEXT, \"kernel '%%s': no CUDA context is current on this thread\", k->name);\n"
"    /* by id, not handle: a context made after another was destroyed may get its handle back */\n"
"    unsigned long long id = 0;\n"
"    if ((r = cuCtxGetId(current, &id)) != CUDA_SUCCESS) return %1$scuda_fail(r, k->name, \"cuCtxGetId\");\n"
"    pthread_mutex_lock(&k->lock);\n"
"    if (k->context && k->context != id) {\n"
"        pthread_mutex_unlock(&k->lock);\n"
"        return %1$sfail(CUDA_ERROR_INVALID_CONTEXT, \"kernel '%%s' is loaded in another context: unload it first\",\n"
"                       k->name);\n"
"    }\n"
"    %1$sVariant *v = &k->variants[i];\n"
"    r = v->function ? CUDA_SUCCESS : %1$sload_variant(k, v);\n"
"    if (r != CUDA_SUCCESS && v->module) {\n"
"        cuModuleUnload(v->module);\n"
"        v->module = NULL, v->function = NULL;\n"
"    }\n"
"    if (r == CUDA_SUCCESS) k->context = id; /* only what loaded ties the kernel to its context */\n"
"    pthread_mutex_unlock(&k->lock);\n"
"    *out = v;\n"
"    return r;\n"
"}\n"
"\n"
"static CUresult %1$sload(%1$sKernel *k) {\n"
"    %1$sVariant *v;\n"
"    for (int i = 0; i < k->count; i++) {\n"
"        CUresult r = %1$sfunction(k, i, &v);\n"
"        if (r != CUDA_SUCCESS) return r;\n"
"    }\n"
"    return CUDA_SUCCESS;\n"
"}\n"
"\n"
"static void %1$sunload(%1$sKernel *k) {\n"
"    pthread_mutex_lock(&k->lock);\n"
"    for (int i = 0; i < k->count; i++) {\n"
"        if (k->variants[i].module) cuModuleUnload(k->variants[i].module);\n"
"        k->variants[i].module = NULL, k->variants[i].function = NULL;\n"
"    }\n"
"    k->context = 0;\n"
"    pthread_mutex_unlock(&k->lock);\n"
"}\n"
"\n"
"/* Rounded to nearest even, as blk's `as` rounds: an f16's and a bf16's bits. */\n"
"static inline uint16_t %1$sf16_bits(float f) {\n"
"    uint32_t x;\n"
"    memcpy(&x, &f, 4);\n"
"    uint16_t sign = (uint16_t)(x >> 16 & 0x8000);\n"
"    uint32_t a = x & 0x7fffffffu;\n"
"    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00);           /* NaN */\n"
"    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00);          /* rounds to infinity */\n"
"    if (a < 0x38800000u) {                                          /* a subnormal f16, or 0 */\n"
"        if (a < 0x33000000u) return sign;\n"
"        uint32_t m = (a & 0x7fffff) | 0x800000;\n"
"        int shift = 126 - (int)(a >> 23);\n"
"        uint32_t h = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);\n"
"        if (rest > half || (rest == half && (h & 1))) h++;\n"
"        return (uint16_t)(sign | h);\n"
"    }\n"
"    uint32_t h = ((a >> 13) - (112u << 10)), rest = a & 0x1fff;\n"
"    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;\n"
"    return (uint16_t)(sign | h);\n"
"}\n"
"\n"
"static inline uint16_t %1$sbf16_bits(float f) {\n"
"    uint32_t x;\n"
"    memcpy(&x, &f, 4);\n"
"    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(x >> 16 | 0x40);\n"
"    x += 0x7fff + (x >> 16 & 1);\n"
"    return (uint16_t)(x >> 16);\n"
"}\n"
"\n"
"/* A tensor map of 16-bit or 8-bit elements (elem_bytes) over rows `stride` elements apart (contract.c),\n"
"   its extents\n"
"   bounds of the kernel's masks where it has them (scale 0: none); false when the driver cannot\n"
"   make it: the kernel then copies by cp.async. As the runtime computes them (nvptx.h). */\n"
"static inline bool %1$stensor_map(CUtensorMap *map, CUdeviceptr base, long long count, long long scale,\n"
"                                      long long rows_count, long long rows_scale, long long cols_count,\n"
"                                      long long cols_scale, unsigned box_inner, unsigned box_rows,\n"
"                                      CUtensorMapSwizzle swizzle, unsigned elem_bytes) {\n"
"    long long stride, cols = 1ll << 31, rows; /* elements between rows: count x scale */\n"
"    if (__builtin_mul_overflow(count, scale, &stride) || stride <= 0 || stride >= (1ll << 40) / elem_bytes) return false;\n"
"    if (cols_scale && __builtin_mul_overflow(cols_count, cols_scale, &cols)) return false;\n"
"    rows = cols_scale ? (1ll << 31) / stride : (long long)box_rows;\n"
"    if (rows_scale && __builtin_mul_overflow(rows_count, rows_scale, &rows)) return false;\n"
"    if (cols < 1 || cols > (1ll << 32) || rows < 1 || rows > (1ll << 32)) return false;\n"
"    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)stride * elem_bytes};\n"
"    cuuint32_t box[2] = {box_inner, box_rows}, steps[2] = {1, 1};\n"
"    return cuTensorMapEncodeTiled(map, elem_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,\n"
"                                  (void *)(uintptr_t)base, dims, strides, box,\n"
"                                  steps, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,\n"
"                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;\n"
"}\n",
            P, LAUNCH_DEFAULT_SHARED_BYTES);
}

static void embed(FILE *out, const char *text) {
    fputs("    \"", out);
    for (const char *c = text; *c; c++) {
        if (*c == '\n') fputs(c[1] ? "\\n\"\n    \"" : "\\n", out);
        else if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
        else if (*c == '\t') fputs("\\t", out);
        else if ((unsigned char)*c < 0x20) fprintf(out, "\\%03o", (unsigned char)*c);
        else fputc(*c, out);
    }
    fputs("\"", out);
}

/* A kernel's PTX in a build b of it alone, its contract at the top (the
 * launcher loads one module per kernel and variant). */
static void variant_text(FILE *out, const LaunchBuild *b, const char *ptx) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return;
    launch_contract_comment(mem, b);
    fputs(ptx, mem);
    fclose(mem);
    embed(out, text);
    free(text);
}

/* The check of one argument against a requirement, as a C statement:
 * `if (broken) <fail>("message", value);`, or `if (broken) holds = false;`
 * where fail is NULL. `what` says where the requirement comes from. */
static void check_requirement(FILE *out, const BirFunction *f, int p, const LaunchRequirement *r, const char *fail,
                              const char *what) {
    const BirParam *prm = &f->params[p];
    char name[32], cond[256], msg[512];
    snprintf(name, sizeof name, "blk_p%d", p);
    const char *value = "";
    if (prm->type.dtype == DT_PTR) {
        snprintf(cond, sizeof cond, "%s %% %lldu", name, (long long)r->align);
        snprintf(msg, sizeof msg, "0x%%llx is not aligned to %lld bytes (%s)", (long long)r->align, what);
        value = "unsigned long long";
    } else if (r->one) {
        snprintf(cond, sizeof cond, "%s != 1", name);
        snprintf(msg, sizeof msg, "%%lld is not 1 (%s)", what);
        value = "long long";
    } else if (r->multiple > 1) {
        snprintf(cond, sizeof cond, "%s %% %lld", name, (long long)r->multiple);
        snprintf(msg, sizeof msg, "%%lld is not a multiple of %lld (%s)", (long long)r->multiple, what);
        value = "long long";
    } else {
        return;
    }
    if (!fail) fprintf(out, "        if (%s) blk_holds = false;\n", cond);
    else fprintf(out, "        if (%s) %s\"kernel '%s', argument %d ('%s'): %s\", (%s)%s);\n", cond, fail, f->name, p,
                 prm->name, msg, value, name);
}

static void kernel_source(FILE *out, const LaunchBuild *builds, int n, int ki, const char *P) {
    const char *I = "blk_"; /* the file's own static names */
    const BirFunction *f = launch_function(&builds[0], &builds[0].out->kernels[ki]);
    const char *K = f->name;
    char name[32];
    /* each variant's PTX: that build compiled for this kernel alone, with its contract */
    for (int v = 0; v < n; v++) {
        NvptxOutput one = *builds[v].out;
        one.kernels = &builds[v].out->kernels[ki];
        one.nkernels = 1;
        LaunchBuild b = builds[v];
        b.out = &one;
        fprintf(out, "\nstatic const char %s%s_ptx_%d[] =\n", I, K, v);
        variant_text(out, &b, builds[v].texts ? builds[v].texts[ki] : builds[v].out->text);
        fputs(";\n", out);
    }
    fprintf(out, "\nstatic %sVariant %s%s_variants[%d] = {\n", I, I, K, n);
    for (int v = 0; v < n; v++) {
        const NvptxKernel *k = &builds[v].out->kernels[ki];
        fprintf(out, "    {%s%s_ptx_%d, %lld, %d, %s, NULL, NULL, 0},\n", I, K, v, (long long)k->shared_bytes,
                32 * k->num_warps, k->persistent ? "true" : "false");
    }
    fprintf(out, "};\nstatic %sKernel %s%s_kernel = {\"%s\", PTHREAD_MUTEX_INITIALIZER, 0, %d, %s%s_variants};\n\n", I,
            I, K, K, n, I, K);
    fprintf(out, "const char *%s%s_last_error(void) { return %serror_text; }\n", P, K, I);
    fprintf(out, "CUresult %s%s_load(void) { return %sload(&%s%s_kernel); }\n", P, K, I, I, K);
    fprintf(out, "void %s%s_unload(void) { %sunload(&%s%s_kernel); }\n\n", P, K, I, I, K);
    definition_head(out, P, f);
    fputs(" {\n", out);
    fprintf(out, "    %sVariant *blk_v;\n    CUresult blk_r;\n    int blk_variant = -1;\n", I);
    fprintf(out, "    if (!grid_x || !grid_y || !grid_z)\n"
                 "        return %sfail(CUDA_ERROR_INVALID_VALUE, \"kernel '%s': the grid (%%u, %%u, %%u) is empty\", "
                 "grid_x, grid_y, grid_z);\n", I, K);
    /* the declared facts and the element alignment hold for every variant */
    char fail[200];
    snprintf(fail, sizeof fail, "return %sfail(CUDA_ERROR_INVALID_VALUE, ", I);
    for (int p = 0; p < f->nparams; p++) {
        const BirParam *prm = &f->params[p];
        LaunchRequirement r;
        launch_requirement(prm, 0, &r);
        snprintf(name, sizeof name, "blk_p%d", p);
        if (prm->type.dtype == DT_PTR && prm->is_none) {
            fprintf(out, "    if (%s) %s\"kernel '%s', argument %d ('%s'): built with it None, so it must be a null "
                    "pointer\");\n", name, fail, K, p, prm->name);
            continue;
        }
        if (prm->type.dtype == DT_PTR) {
            fprintf(out, "    if (!%s) %s\"kernel '%s', argument %d ('%s'): a null pointer\");\n", name, fail, K, p,
                    prm->name);
        }
        if (prm->type.dtype == DT_PTR || r.one || r.multiple > 1) {
            fputs("    {\n", out);
            check_requirement(out, f, p, &r, fail, prm->type.dtype == DT_PTR && r.align == dtype_bytes(prm->type.elem)
                                                             ? "its elements' size"
                                                             : "as the kernel declares");
            fputs("    }\n", out);
        }
    }
    /* the first variant whose facts hold */
    for (int v = 0; v < n; v++) {
        const NvptxKernel *k = &builds[v].out->kernels[ki];
        fprintf(out, "    if (blk_variant < 0) { /* blk_variant %d */\n        bool blk_holds = true;\n", v);
        bool any = false;
        for (int p = 0; p < f->nparams; p++) {
            LaunchRequirement r;
            launch_requirement(&f->params[p], k->facts[p], &r);
            if (!k->facts[p]) continue;
            any = true;
            check_requirement(out, f, p, &r, v + 1 < n ? NULL : fail, "the facts its most general variant was compiled "
                              "assuming: build one without them");
        }
        if (!any) fputs("        (void)blk_holds;\n", out);
        fprintf(out, "        if (blk_holds) blk_variant = %d;\n    }\n", v);
    }
    fprintf(out, "    if ((blk_r = %sfunction(&%s%s_kernel, blk_variant, &blk_v)) != CUDA_SUCCESS) return blk_r;\n", I, I, K);
    /* the parameters, then the appended ones */
    fprintf(out, "    void *blk_params[%d];\n", f->nparams + NVPTX_MAX_TENSOR_MAPS + 4);
    for (int p = 0; p < f->nparams; p++) {
        const BirParam *prm = &f->params[p];
        snprintf(name, sizeof name, "blk_p%d", p);
        DType d = prm->type.dtype;
        if (d == DT_F16 || d == DT_BF16)
            fprintf(out, "    uint16_t blk_param_%d = %s%s_bits(%s);\n", p, I, d == DT_F16 ? "f16" : "bf16", name);
        else if (d == DT_I1)
            fprintf(out, "    uint8_t blk_param_%d = %s ? 1 : 0;\n", p, name);
        else
            fprintf(out, "    %s blk_param_%d = %s;\n", launch_c_type(d), p, name);
        fprintf(out, "    blk_params[%d] = &blk_param_%d;\n", p, p);
    }
    fprintf(out, "    int blk_n = %d;\n    uint32_t blk_made = 0, blk_grid[3] = {grid_x, grid_y, grid_z};\n", f->nparams);
    fprintf(out, "    CUtensorMap blk_maps[%d];\n", NVPTX_MAX_TENSOR_MAPS);
    fputs("    unsigned blk_launched = grid_x, blk_launched_y = grid_y, blk_launched_z = grid_z;\n", out);
    fputs("    switch (blk_variant) {\n", out);
    for (int v = 0; v < n; v++) {
        const NvptxKernel *k = &builds[v].out->kernels[ki];
        if (!k->tensor_maps.count && !k->persistent) continue;
        fprintf(out, "    case %d:\n", v);
        for (int m = 0; m < k->tensor_maps.count; m++) {
            const NvptxTensorMap *t = &k->tensor_maps.map[m];
            char stride[600];
            int params[3] = {t->stride_param, t->rows_param, t->cols_param};
            long long scales[3] = {t->stride_scale, t->rows_scale, t->cols_scale};
            size_t len = 0;
            for (int q = 0; q < 3; q++) {
                char count[32] = "1ll";
                if (params[q] >= 0) snprintf(count, sizeof count, "(long long)blk_p%d", params[q]);
                len += (size_t)snprintf(stride + len, sizeof stride - len, "%s%s, %lldll", q ? ", " : "", count,
                                        scales[q]);
            }
            fprintf(out, "        if (%stensor_map(&blk_maps[%d], blk_p%d, %s, %d, %d, %s, %d)) blk_made |= 1u << %d;\n"
                         "        else memset(&blk_maps[%d], 0, sizeof blk_maps[%d]);\n"
                         "        blk_params[blk_n++] = &blk_maps[%d];\n",
                    I, m, t->base_param, stride, t->box_inner, t->box_rows, launch_swizzle_name(t->swizzle_bytes),
                    t->elem_bytes, m, m, m, m);
        }
        if (k->tensor_maps.count) fputs("        blk_params[blk_n++] = &blk_made;\n", out);
        if (k->persistent)
            fputs("        {\n"
                  "            if ((unsigned long long)grid_x * grid_y > ~0ull / grid_z)\n"
                  "                return blk_fail(CUDA_ERROR_INVALID_VALUE, \"the grid (%u, %u, %u) has 2^64 programs or more\", "
                  "grid_x, grid_y, grid_z);\n"
                  "            unsigned long long blk_programs = (unsigned long long)grid_x * grid_y * grid_z;\n"
                  "            blk_launched = blk_programs < blk_v->at_once ? (unsigned)blk_programs : blk_v->at_once;\n"
                  "            blk_launched_y = blk_launched_z = 1;\n"
                  "            for (int blk_a = 0; blk_a < 3; blk_a++) blk_params[blk_n++] = &blk_grid[blk_a];\n"
                  "        }\n", out);
        fputs("        break;\n", out);
    }
    fputs("    default: break;\n    }\n    (void)blk_n, (void)blk_made, (void)blk_grid, (void)blk_maps;\n", out);
    /* a kernel with gdc_wait may start while the grid before it ends (programmatic dependent launch,
     * sm_90 up, cuLaunchKernelEx from CUDA 12), as the runtime launches it */
    bool after_previous = nvptx_launches_after_previous(nvptx_arch(builds[0].arch), f);
    if (after_previous)
        fprintf(out, "#if CUDA_VERSION >= 12000\n"
                     "    /* its gdc_wait makes an early start safe: the grid before it's writes are seen after it */\n"
                     "    CUlaunchAttribute blk_attr;\n"
                     "    memset(&blk_attr, 0, sizeof blk_attr);\n"
                     "    blk_attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;\n"
                     "    blk_attr.value.programmaticStreamSerializationAllowed = 1;\n"
                     "    CUlaunchConfig blk_config;\n"
                     "    memset(&blk_config, 0, sizeof blk_config);\n"
                     "    blk_config.gridDimX = blk_launched, blk_config.gridDimY = blk_launched_y, blk_config.gridDimZ = blk_launched_z;\n"
                     "    blk_config.blockDimX = (unsigned)blk_v->threads, blk_config.blockDimY = 1, blk_config.blockDimZ = 1;\n"
                     "    blk_config.sharedMemBytes = (unsigned)blk_v->shared_bytes, blk_config.hStream = stream;\n"
                     "    blk_config.attrs = &blk_attr, blk_config.numAttrs = 1;\n"
                     "    blk_r = cuLaunchKernelEx(&blk_config, blk_v->function, blk_params, NULL);\n"
                     "    return blk_r == CUDA_SUCCESS ? (%serror_text[0] = 0, CUDA_SUCCESS) : %scuda_fail(blk_r, \"%s\", \"cuLaunchKernelEx\");\n"
                     "#else\n", I, I, K);
    fprintf(out, "    blk_r = cuLaunchKernel(blk_v->function, blk_launched, blk_launched_y, blk_launched_z, (unsigned)blk_v->threads, 1, 1,\n"
                 "                       (unsigned)blk_v->shared_bytes, stream, blk_params, NULL);\n"
                 "    return blk_r == CUDA_SUCCESS ? (%serror_text[0] = 0, CUDA_SUCCESS) : %scuda_fail(blk_r, \"%s\", \"cuLaunchKernel\");\n",
            I, I, K);
    if (after_previous) fputs("#endif\n", out);
    fputs("}\n", out);
}

bool launch_c_source(FILE *out, const LaunchBuild *builds, int nbuilds, const char *prefix, bool header, char *err,
                     size_t err_size) {
    if (nbuilds < 1 || !builds_match(builds, nbuilds, err, err_size)) {
        if (nbuilds < 1) snprintf(err, err_size, "no build to write a launcher for");
        return false;
    }
    const LaunchBuild *b = &builds[0];
    const char *src = b->bir->nkernels && b->bir->kernels[0]->src ? b->bir->kernels[0]->src->name : "a blk source";
    fprintf(out, "/* Generated by blkc %s from %s for %s: a launcher for its kernels (docs/runtime.md,\n"
                 " * \"Ahead of time\"). Needs cuda.h; link with -lcuda%s. Do not edit: compile the source again. */\n",
            BLKC_VERSION, src, b->arch, header ? "" : " -lpthread");
    if (header) {
        char guard[128];
        snprintf(guard, sizeof guard, "BLK_LAUNCHER_%s_%s_H", prefix, b->out->nkernels ? b->out->kernels[0].name : "");
        for (char *c = guard; *c; c++)
            if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
        fprintf(out, "#ifndef %s\n#define %s\n\n#include <stdbool.h>\n#include <stdint.h>\n\n#include <cuda.h>\n\n"
                     "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", guard, guard);
        declarations(out, b, prefix);
        fprintf(out, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
        return true;
    }
    fputs("#include <pthread.h>\n#include <stdarg.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n"
          "#include <string.h>\n\n#include <cuda.h>\n\n", out);
    declarations(out, b, prefix);
    fputc('\n', out);
    helpers(out);
    for (int i = 0; i < b->out->nkernels; i++) kernel_source(out, builds, nbuilds, i, prefix);
    return true;
}

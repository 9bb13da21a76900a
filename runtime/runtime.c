/* runtime.c: the blk runtime API (include/blk.h), device-independent:
 * errors, contexts' common part, modules and kernels, argument checking and
 * launch specialization. Each device is behind the interface of device.h:
 * the reference interpreter (device_cpu.c) and the CUDA driver, loaded with
 * dlopen at run time (device_cuda.c). Every call into the compiler goes
 * through jit.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "device.h"
#include "cuda_tools.h"
#include "launch.h"

/* ---------------------------------------------------------------- errors */

static _Thread_local char last_error[16384];

const char *blk_last_error(void) { return last_error; }

blk_status blk_fail(blk_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

static blk_status ok(void) {
    last_error[0] = 0;
    return BLK_SUCCESS;
}

const char *blk_cache_directory(void) {
    static _Thread_local char dir[4096];
    bool too_long;
    const char *d = blk_cache_dir(dir, sizeof dir, &too_long);
    if (d || !blk_cache_dir_problem()[0]) ok(); /* found, or off */
    else blk_fail(BLK_ERROR_INVALID_VALUE, "%s", blk_cache_dir_problem());
    return d;
}

const char *blk_status_string(blk_status s) {
    switch (s) {
    case BLK_SUCCESS: return "BLK_SUCCESS: no error";
    case BLK_ERROR_INVALID_VALUE: return "BLK_ERROR_INVALID_VALUE: an invalid argument to the API";
    case BLK_ERROR_NO_DRIVER: return "BLK_ERROR_NO_DRIVER: no CUDA driver";
    case BLK_ERROR_NO_DEVICE: return "BLK_ERROR_NO_DEVICE: no such CUDA device";
    case BLK_ERROR_COMPILE: return "BLK_ERROR_COMPILE: the source did not compile";
    case BLK_ERROR_NOT_FOUND: return "BLK_ERROR_NOT_FOUND: no kernel by that name";
    case BLK_ERROR_BAD_ARGUMENT: return "BLK_ERROR_BAD_ARGUMENT: a launch argument does not fit the kernel";
    case BLK_ERROR_BAD_GRID: return "BLK_ERROR_BAD_GRID: an empty or oversized grid";
    case BLK_ERROR_OUT_OF_MEMORY: return "BLK_ERROR_OUT_OF_MEMORY: out of memory";
    case BLK_ERROR_CUDA: return "BLK_ERROR_CUDA: a CUDA call failed";
    case BLK_ERROR_KERNEL_FAULT: return "BLK_ERROR_KERNEL_FAULT: the kernel faulted";
    case BLK_ERROR_CONTEXT_LOST: return "BLK_ERROR_CONTEXT_LOST: the context is unusable after a fault";
    }
    return "BLK_ERROR: unknown status";
}

/* --------------------------------------------------------------- context */

/* Every call on a context starts here. */
static blk_status enter(blk_context *ctx) {
    if (!ctx) return blk_fail(BLK_ERROR_INVALID_VALUE, "the context is NULL");
    if (!blk_handle_live(ctx, BLK_HANDLE_CONTEXT))
        return blk_fail(BLK_ERROR_INVALID_VALUE, "the context was destroyed (or is not a context)");
    if (ctx->lost) return blk_fail(BLK_ERROR_CONTEXT_LOST, "this context hit a kernel fault earlier; destroy it");
    return ctx->dev->enter(ctx);
}

static blk_status context_create(const BlkDevice *dev, int ordinal, blk_context **out) {
    if (!out) return blk_fail(BLK_ERROR_INVALID_VALUE, "out is NULL");
    *out = NULL;
    blk_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory for a context");
    ctx->dev = dev;
    blk_status s = dev->open(ctx, ordinal);
    if (s) {
        free(ctx);
        return s;
    }
    if (!blk_handle_add(ctx, BLK_HANDLE_CONTEXT)) {
        dev->close(ctx);
        free(ctx);
        return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory for a context");
    }
    *out = ctx;
    return ok();
}

blk_status blk_context_create_cpu(blk_context **out) { return context_create(&blk_device_cpu, 0, out); }
blk_status blk_context_create_cuda(int ordinal, blk_context **out) { return context_create(&blk_device_cuda, ordinal, out); }

void blk_context_destroy(blk_context *ctx) {
    if (!ctx || !blk_handle_remove(ctx, BLK_HANDLE_CONTEXT)) return; /* destroyed already: nothing to do */
    ctx->dev->close(ctx);
    free(ctx);
}

const char *blk_context_device(const blk_context *ctx) {
    return blk_handle_live(ctx, BLK_HANDLE_CONTEXT) ? ctx->device : "";
}

blk_status blk_context_shuffle_programs(blk_context *ctx, uint64_t seed) {
    if (!blk_handle_live(ctx, BLK_HANDLE_CONTEXT))
        return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_context_shuffle_programs: %s",
                        ctx ? "the context was destroyed (or is not a context)" : "NULL context");
    if (ctx->dev != &blk_device_cpu)
        return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_context_shuffle_programs: only the cpu device runs programs in "
                        "an order blk chooses (%s is a GPU)", ctx->device);
    ctx->shuffle_seed = seed;
    return ok();
}

/* ---------------------------------------------------------------- memory */

static blk_status done(blk_status s) { return s ? s : ok(); }

blk_status blk_malloc(blk_context *ctx, size_t bytes, blk_ptr *out) {
    blk_status s = enter(ctx);
    if (s) return s;
    if (!out || bytes == 0) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_malloc needs a size and an out pointer");
    return done(ctx->dev->alloc(ctx, bytes, out));
}

blk_status blk_free(blk_context *ctx, blk_ptr ptr) {
    if (!ctx) return blk_fail(BLK_ERROR_INVALID_VALUE, "the context is NULL");
    if (!blk_handle_live(ctx, BLK_HANDLE_CONTEXT))
        return blk_fail(BLK_ERROR_INVALID_VALUE, "the context was destroyed (or is not a context)");
    if (ptr == 0 || ctx->lost) return ok(); /* a lost context's memory goes with it */
    blk_status s = enter(ctx);
    return s ? s : done(ctx->dev->free(ctx, ptr));
}

blk_status blk_memcpy_to_device(blk_context *ctx, blk_ptr dst, const void *src, size_t bytes) {
    blk_status s = enter(ctx);
    if (s) return s;
    if ((!src || !dst) && bytes) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_memcpy_to_device: a NULL pointer");
    return bytes ? done(ctx->dev->copy_to_device(ctx, dst, src, bytes)) : ok();
}

blk_status blk_memcpy_to_host(blk_context *ctx, void *dst, blk_ptr src, size_t bytes) {
    blk_status s = enter(ctx);
    if (s) return s;
    if ((!src || !dst) && bytes) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_memcpy_to_host: a NULL pointer");
    return bytes ? done(ctx->dev->copy_to_host(ctx, dst, src, bytes)) : ok();
}

blk_status blk_memset(blk_context *ctx, blk_ptr dst, int byte, size_t bytes) {
    blk_status s = enter(ctx);
    if (s) return s;
    if (!dst && bytes) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_memset: a NULL pointer");
    return bytes ? done(ctx->dev->memset(ctx, dst, byte, bytes)) : ok();
}

blk_status blk_synchronize(blk_context *ctx) {
    blk_status s = enter(ctx);
    return s ? s : done(ctx->dev->synchronize(ctx));
}

/* --------------------------------------------------------------- modules */

typedef struct {
    BlkFacts facts;
    void *code;     /* the device's */
    char *ptx;      /* blk_kernel_launch_ptx's, where the device keeps none; made on request */
} Variant;

/* A schedule blk_kernel_plan made, for the launch facts it was made under. */
typedef struct PlanText {
    BlkFacts facts;
    char *text;
    struct PlanText *next;
} PlanText;

/* A page blk_kernel_explore made, for the PTX and plan it shows (both the kernel's). */
typedef struct PageText {
    const char *ptx, *plan;
    char *html;
    struct PageText *next;
} PageText;

struct blk_kernel {
    blk_module *module;
    const BirFunction *f;
    char *ptx, *llvm_ir; /* unspecialized, made on request */
    PlanText *plans;     /* blk_kernel_plan's, one per set of facts asked for */
    PageText *pages;     /* blk_kernel_explore's */
    Variant *variants;
    int nvariants, cap;
};

struct blk_module {
    blk_context *ctx;
    const BlkDevice *dev; /* ctx's, kept: a module may be destroyed after its context */
    Compilation *comp;
    NvptxOptions backend;
    bool auto_occupancy;  /* min_blocks_per_sm 0: the device may set the occupancy target */
    char arch[16];
    blk_kernel *kernels;
    int nkernels;
    char *cache_key;      /* what the code depends on: compiler, options, defines, source */
    char *diagnostics;    /* the compile's notes and warnings, or NULL */
    size_t cache_key_len;
    pthread_mutex_t lock; /* variants and the lazily made texts */
};

/* blk_compile_options' fields are options.def's rows: num_warps, num_stages and
 * min_blocks_per_sm where blk.h has always had them, then the other integer options
 * and the flags in the table's order, last in the struct: checked here, so that
 * blk.h and the table cannot drift apart. */
enum {
#define BLK_FLAG(name, cli, help) FLAG_AT_##name,
#include "options.def"
#undef BLK_FLAG
    NUM_FLAGS
};
enum { FIXED_INT_OPTIONS = 3, NEW_INT_OPTIONS = BLK_NUM_INT_OPTIONS - FIXED_INT_OPTIONS };
_Static_assert(BLK_INT_AT_num_warps == 0 && BLK_INT_AT_num_stages == 1 && BLK_INT_AT_min_blocks_per_sm == 2,
               "options.def: num_warps, num_stages and min_blocks_per_sm are its first integer options, in that order");
#define BLK_INT(name, cli, lo, hi, rule, value, help)                                                                  \
    _Static_assert(sizeof(((blk_compile_options *)0)->name) == sizeof(int) &&                                          \
                       ((int)BLK_INT_AT_##name < (int)FIXED_INT_OPTIONS ||                                              \
                        offsetof(blk_compile_options, name) ==                                                         \
                            offsetof(blk_compile_options, min_blocks_per_sm) +                                         \
                                sizeof(int) * (size_t)((int)BLK_INT_AT_##name - (int)FIXED_INT_OPTIONS + 1)),           \
                   "blk_compile_options." #name " is not an int where options.def's order puts it");
#define BLK_FLAG(name, cli, help)                                                                                      \
    _Static_assert(offsetof(blk_compile_options, name) ==                                                             \
                       offsetof(blk_compile_options, min_blocks_per_sm) +                                             \
                           sizeof(int) * (1 + NEW_INT_OPTIONS + FLAG_AT_##name),                                       \
                   "blk_compile_options." #name " is not where options.def's order puts it");
#include "options.def"
#undef BLK_FLAG
#undef BLK_INT
_Static_assert(sizeof(blk_compile_options) ==
                   (offsetof(blk_compile_options, min_blocks_per_sm) + sizeof(int) * (1 + NEW_INT_OPTIONS + NUM_FLAGS) +
                    _Alignof(blk_compile_options) - 1) / _Alignof(blk_compile_options) * _Alignof(blk_compile_options),
               "blk_compile_options has fields after its flags (beyond what its trailing padding could hide)");

static const char compile_flags[] =
#define BLK_FLAG(name, cli, help) " " #name
#include "options.def"
#undef BLK_FLAG
    ;
const char *blk_compile_flags(void) { return compile_flags + 1; }
static const char compile_int_options[] =
#define BLK_INT(name, cli, lo, hi, rule, value, help) " " #name
#include "options.def"
#undef BLK_INT
    ;
const char *blk_compile_int_options(void) { return compile_int_options + 1; }
size_t blk_compile_options_size(void) { return sizeof(blk_compile_options); }

/* The disk cache's key of a module: everything the generated code depends
 * on but the kernel, its launch facts and the device; malloc'ed. */
static char *module_key(const char *arch, const blk_compile_options *opt, const ConstDef *defs, int ndefs,
                        const char *source, size_t length, size_t *key_len) {
    char line[512], build[128];
    blk_build_id(build, sizeof build); /* another build of the compiler writes other PTX */
    int at = snprintf(line, sizeof line, "blkc %s\nbuild %s\narch %s\n", BLKC_VERSION, build, arch);
#define BLK_INT(name, cli, lo, hi, rule, value, help) \
    if (at >= 0 && (size_t)at < sizeof line) at += snprintf(line + at, sizeof line - (size_t)at, #name " %d\n", opt->name);
#include "options.def"
#undef BLK_INT
#define BLK_FLAG(name, cli, help) \
    if (at >= 0 && (size_t)at < sizeof line) at += snprintf(line + at, sizeof line - (size_t)at, #name " %d\n", opt->name != 0);
#include "options.def"
#undef BLK_FLAG
    if (at < 0 || (size_t)at >= sizeof line) return NULL; /* cannot happen: the build id and arch are short */
    size_t cap = strlen(line) + length + 64;
    for (int k = 0; k < ndefs; k++) cap += strlen(defs[k].name) + strlen(defs[k].value) + 8;
    char *key = malloc(cap);
    if (!key) return NULL;
    size_t len = (size_t)snprintf(key, cap, "%s", line);
    for (int k = 0; k < ndefs; k++)
        len += (size_t)snprintf(key + len, cap - len, "define %s=%s\n", defs[k].name, defs[k].value);
    len += (size_t)snprintf(key + len, cap - len, "source %zu\n", length);
    if (length) memcpy(key + len, source, length);
    *key_len = len + length;
    return key;
}

static void module_free(blk_module *m, bool ctx_live);

blk_status blk_module_create(blk_context *ctx, const char *source, size_t length, const blk_compile_options *opt,
                             blk_module **out) {
    blk_status s = enter(ctx);
    if (s) return s;
    if (!out || (!source && length)) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_module_create: NULL source or out");
    *out = NULL;
    blk_compile_options given = opt ? *opt : (blk_compile_options){0};
    const char *debug_env = getenv("BLK_DEBUG"); /* as Triton's TRITON_DEBUG=1 */
    if (debug_env && *debug_env && strcmp(debug_env, "0") != 0) given.debug = 1;
    opt = &given;
    if (opt->num_defines < 0 || opt->num_defines > 256 || (opt->num_defines && !opt->defines))
        return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_compile_options: bad defines");
    char range[64];
#define BLK_INT(name, cli, lo, hi, rule, value, help)                                                                  \
    if (!blk_int_option_ok(&blk_int_options[BLK_INT_AT_##name], opt->name, false))                                     \
        return blk_fail(BLK_ERROR_INVALID_VALUE, #name " must be %s, got %d",                                           \
                        blk_int_option_range(&blk_int_options[BLK_INT_AT_##name], false, range, sizeof range), opt->name);
#include "options.def"
#undef BLK_INT
    const char *arch = opt->arch ? opt->arch : ctx->arch;
    if (!blk_jit_arch_known(arch)) {
        char names[128];
        return blk_fail(BLK_ERROR_INVALID_VALUE, "unknown arch '%s' (expected %s)", arch,
                        blk_jit_arch_names(names, sizeof names));
    }
    /* -D values, split into name and value */
    ConstDef defs[256];
    char *def_text[256] = {0};
    int ndefs = 0;
    for (int i = 0; i < opt->num_defines; i++) {
        const char *d = opt->defines[i];
        const char *eq = d ? strchr(d, '=') : NULL;
        if (!eq || eq == d) {
            for (int k = 0; k < ndefs; k++) free(def_text[k]);
            return blk_fail(BLK_ERROR_INVALID_VALUE, "define %d ('%s') is not NAME=VALUE", i, d ? d : "(null)");
        }
        size_t n = strlen(d);
        if (!(def_text[ndefs] = malloc(n + 1))) {
            for (int k = 0; k < ndefs; k++) free(def_text[k]);
            return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
        }
        memcpy(def_text[ndefs], d, n + 1);
        def_text[ndefs][eq - d] = 0;
        defs[ndefs] = (ConstDef){def_text[ndefs], def_text[ndefs] + (eq - d) + 1, false};
        ndefs++;
    }
    char *diags = NULL;
    Compilation *comp = blk_jit_compile(opt->name ? opt->name : "<source>", source ? source : "", length, defs, ndefs,
                                        &diags);
    size_t key_len = 0;
    char *key = module_key(arch, opt, defs, ndefs, source, length, &key_len);
    for (int k = 0; k < ndefs; k++) free(def_text[k]);
    if (!comp) {
        s = blk_fail(BLK_ERROR_COMPILE, "%s", diags ? diags : "the source did not compile");
        free(diags);
        free(key);
        return s;
    }
    blk_module *m = calloc(1, sizeof *m);
    blk_kernel *kernels = calloc((size_t)(comp->bir->nkernels ? comp->bir->nkernels : 1), sizeof *kernels);
    if (!m || !key || !kernels) {
        free(m);
        free(key);
        free(kernels);
        free(diags);
        blk_jit_release(comp);
        return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    m->cache_key = key;
    m->cache_key_len = key_len;
    m->diagnostics = diags;
    m->ctx = ctx;
    m->dev = ctx->dev;
    m->comp = comp;
    snprintf(m->arch, sizeof m->arch, "%s", arch);
    m->backend.arch = m->arch;
#define BLK_INT(name, cli, lo, hi, rule, value, help) m->backend.name = opt->name > 0 ? opt->name : 0; /* -1: 0 */
#define BLK_FLAG(name, cli, help) m->backend.name = opt->name != 0;
#include "options.def"
#undef BLK_FLAG
#undef BLK_INT
    m->auto_occupancy = opt->min_blocks_per_sm == 0;
    pthread_mutex_init(&m->lock, NULL);
    m->nkernels = comp->bir->nkernels;
    m->kernels = kernels;
    bool registered = blk_handle_add(m, BLK_HANDLE_MODULE);
    for (int i = 0; i < m->nkernels; i++) {
        m->kernels[i].module = m;
        m->kernels[i].f = comp->bir->kernels[i];
        registered = registered && blk_handle_add(&m->kernels[i], BLK_HANDLE_KERNEL);
    }
    if (!registered) {
        blk_handle_remove(m, BLK_HANDLE_MODULE);
        module_free(m, true);
        return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    *out = m;
    return ok();
}

blk_status blk_module_create_from_file(blk_context *ctx, const char *path, const blk_compile_options *opt,
                                       blk_module **out) {
    if (!path) return blk_fail(BLK_ERROR_INVALID_VALUE, "the path is NULL");
    char *text, err[1200];
    size_t len;
    SourceStatus read = source_read(path, false, &text, &len, err, sizeof err);
    if (read) return blk_fail(read == SOURCE_OUT_OF_MEMORY ? BLK_ERROR_OUT_OF_MEMORY : BLK_ERROR_INVALID_VALUE, "%s", err);
    blk_compile_options o = opt ? *opt : (blk_compile_options){0};
    if (!o.name) o.name = path;
    blk_status s = blk_module_create(ctx, text, len, &o, out);
    free(text);
    return s;
}

/* Frees a module (its kernels' handles removed); the device's code too
 * where its context is still live (it went with a destroyed one). */
static void module_free(blk_module *m, bool ctx_live) {
    for (int i = 0; i < m->nkernels; i++) {
        blk_kernel *k = &m->kernels[i];
        blk_handle_remove(k, BLK_HANDLE_KERNEL);
        for (int v = 0; v < k->nvariants; v++) {
            m->dev->unload(ctx_live ? m->ctx : NULL, k->variants[v].code);
            free(k->variants[v].ptx);
        }
        free(k->variants);
        while (k->plans) {
            PlanText *next = k->plans->next;
            free(k->plans->text);
            free(k->plans);
            k->plans = next;
        }
        while (k->pages) {
            PageText *next = k->pages->next;
            free(k->pages->html);
            free(k->pages);
            k->pages = next;
        }
        free(k->ptx);
        free(k->llvm_ir);
    }
    free(m->kernels);
    free(m->cache_key);
    free(m->diagnostics);
    blk_jit_release(m->comp);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void blk_module_destroy(blk_module *m) {
    if (!m || !blk_handle_remove(m, BLK_HANDLE_MODULE)) return; /* destroyed already: nothing to do */
    module_free(m, blk_handle_live(m->ctx, BLK_HANDLE_CONTEXT));
}

blk_status blk_module_get_kernel(blk_module *m, const char *name, blk_kernel **out) {
    if (!m || !name || !out) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_module_get_kernel: a NULL argument");
    if (!blk_handle_live(m, BLK_HANDLE_MODULE))
        return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_module_get_kernel: the module was destroyed (or is not a module)");
    for (int i = 0; i < m->nkernels; i++) {
        if (strcmp(m->kernels[i].f->name, name) == 0) {
            *out = &m->kernels[i];
            return ok();
        }
    }
    char names[512] = "";
    for (int i = 0; i < m->nkernels; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", m->kernels[i].f->name);
    return blk_fail(BLK_ERROR_NOT_FOUND, "no kernel named '%s' in the module (it has: %s)", name, names);
}

const char *blk_module_diagnostics(const blk_module *m) {
    return m && blk_handle_live(m, BLK_HANDLE_MODULE) ? m->diagnostics : NULL;
}

/* A kernel that is still one: NULL, destroyed with its module, or foreign, it is not. */
static bool live_kernel(const blk_kernel *k) { return blk_handle_live(k, BLK_HANDLE_KERNEL); }

const char *blk_kernel_name(const blk_kernel *k) { return live_kernel(k) ? k->f->name : ""; }
const char *blk_kernel_consts(const blk_kernel *k) { return live_kernel(k) && k->f->consts ? k->f->consts : ""; }
int blk_kernel_num_args(const blk_kernel *k) { return live_kernel(k) ? k->f->nparams : 0; }

const char *blk_kernel_arg_name(const blk_kernel *k, int i) {
    return live_kernel(k) && i >= 0 && i < k->f->nparams ? k->f->params[i].name : NULL;
}

/* The one mapping of parameter types to argument kinds. */
static blk_arg_kind param_arg_kind(const BirParam *p) {
    DType d = p->type.dtype;
    if (d == DT_PTR) return BLK_ARG_PTR;
    if (d == DT_F64) return BLK_ARG_F64;
    if (dtype_is_float(d)) return BLK_ARG_F32; /* f16 and bf16 rounded at launch */
    if (dtype_bits(d) == 64) return dtype_is_unsigned(d) ? BLK_ARG_U64 : BLK_ARG_I64;
    return dtype_is_unsigned(d) ? BLK_ARG_U32 : BLK_ARG_I32; /* narrower integers and i1 too */
}

int blk_kernel_arg_kind(const blk_kernel *k, int i) {
    if (!live_kernel(k) || i < 0 || i >= k->f->nparams) return -1;
    return (int)param_arg_kind(&k->f->params[i]);
}

const char *blk_kernel_arg_type(const blk_kernel *k, int i) {
    if (!live_kernel(k) || i < 0 || i >= k->f->nparams) return NULL;
    /* static strings, so the caller may keep them: a scalar's type name, or
     * "*" and the element type's (indexed by DType) */
    static const char *const pointers[] = {
#define DTYPE(ID, name, ...) [DT_##ID] = "*" name,
#include "dtypes.def"
    };
    BlkType t = k->f->params[i].type;
    if (t.dtype != DT_PTR) return dtype_name(t.dtype);
    return (unsigned)t.elem < sizeof pointers / sizeof *pointers && pointers[t.elem] ? pointers[t.elem] : "*?";
}

/* PTX or LLVM IR of a kernel, with the given launch facts (NULL: none);
 * NULL with the error set on failure. */
static char *emit(blk_kernel *k, const int64_t *param_div, int min_blocks_per_sm, bool llvm_ir, NvptxKernel *info) {
    NvptxOptions bo = k->module->backend;
    bo.param_div = param_div;
    if (min_blocks_per_sm) bo.min_blocks_per_sm = min_blocks_per_sm;
    char err[8192];
    char *text = blk_jit_emit(k->module->comp, k->f->name, &bo, llvm_ir, info, err, sizeof err);
    if (!text) blk_fail(BLK_ERROR_COMPILE, "kernel '%s': %s", k->f->name, err);
    return text;
}

static blk_status kernel_text(blk_kernel *k, bool llvm_ir, const char **out) {
    if (!k || !out) return blk_fail(BLK_ERROR_INVALID_VALUE, "a NULL argument");
    if (!live_kernel(k)) return blk_fail(BLK_ERROR_INVALID_VALUE, "the kernel was destroyed with its module (or is not a kernel)");
    pthread_mutex_lock(&k->module->lock);
    char **slot = llvm_ir ? &k->llvm_ir : &k->ptx;
    NvptxKernel info;
    blk_status s = BLK_ERROR_COMPILE; /* emit sets the error when it fails */
    if (!*slot && (*slot = emit(k, NULL, 0, llvm_ir, &info)) && !llvm_ir) {
        /* the PTX with its launch contract, as blkc writes it */
        char *both = blk_jit_contract(k->module->comp, &k->module->backend, &info, false, *slot);
        free(*slot);
        *slot = both;
        if (!both) s = blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    *out = *slot;
    pthread_mutex_unlock(&k->module->lock);
    return *out ? ok() : s;
}

blk_status blk_kernel_ptx(blk_kernel *k, const char **ptx) { return kernel_text(k, false, ptx); }

/* The facts of a specialization as the backend takes them (NvptxOptions.param_div). */
static void facts_div(const BirFunction *f, BlkFacts facts, int64_t *div) {
    for (int i = 0; i < f->nparams && i < 64; i++) {
        div[i] = 0;
        if (facts.div16 >> i & 1) div[i] = 16;
        if (facts.div8 >> i & 1) div[i] = 8;
        if (facts.div4 >> i & 1) div[i] = 4;
        if (facts.one >> i & 1) div[i] = NVPTX_PARAM_ONE;
    }
}

char *blk_variant_contract(const BlkVariantSpec *spec, const BlkKernelCode *code, bool json) {
    const blk_kernel *k = spec->kernel;
    const BirFunction *f = k->f;
    NvptxKernel info = {.name = f->name, .num_warps = code->warps, .shared_bytes = code->shared_bytes,
                        .tensor_maps = code->tensor_maps, .persistent = spec->persistent, .min_regs = code->min_regs};
    facts_div(f, spec->facts, info.facts);
    for (int i = 0; i < f->nparams && i < BLK_MAX_KERNEL_ARGS; i++)
        if (f->params[i].equal_one) info.facts[i] = NVPTX_PARAM_ONE;
    return blk_jit_contract(k->module->comp, &k->module->backend, &info, json, json ? NULL : code->ptx);
}

/* Writes text to dir/name atomically (a temporary file, then rename). */
static void dump_file(const char *dir, const char *name, const char *text) {
    char path[4096], tmp[4096 + 16];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return;
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) return;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    bool ok = off == len && fchmod(fd, 0644) == 0;
    if (close(fd) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

void blk_dump_variant(const BlkVariantSpec *spec, const BlkKernelCode *code, const char *ptx_with_contract) {
    const char *dir = getenv("BLK_DUMP_DIR");
    if (!dir || !*dir || !ptx_with_contract) return;
    mkdir(dir, 0755); /* one level, as a user names it; an existing one is fine */
    /* the name says the kernel and its launch facts; the hash tells builds apart (other consts, options) */
    uint64_t h = 1469598103934665603ull;
    for (const char *c = ptx_with_contract; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    char name[256];
    snprintf(name, sizeof name, "%.120s-%llx-%llx-%llx-%llx-%016llx.ptx", spec->name,
             (unsigned long long)spec->facts.div16, (unsigned long long)spec->facts.div8,
             (unsigned long long)spec->facts.div4, (unsigned long long)spec->facts.one, (unsigned long long)h);
    dump_file(dir, name, ptx_with_contract);
    char *json = blk_variant_contract(spec, code, true);
    if (json) {
        memcpy(name + strlen(name) - 4, ".json", 6);
        dump_file(dir, name, json);
        free(json);
    }
}
blk_status blk_kernel_llvm_ir(blk_kernel *k, const char **ir) { return kernel_text(k, true, ir); }

blk_status blk_kernel_code(const BlkVariantSpec *spec, int min_blocks_per_sm, BlkKernelCode *out) {
    const BirFunction *f = spec->kernel->f;
    int64_t div[64] = {0};
    facts_div(f, spec->facts, div);
    *out = (BlkKernelCode){0};
    NvptxKernel info;
    out->ptx = emit(spec->kernel, div, min_blocks_per_sm, false, &info);
    if (out->ptx) {
        out->warps = info.num_warps, out->shared_bytes = info.shared_bytes;
        out->tensor_maps = info.tensor_maps;
        out->min_regs = info.min_regs;
    }
    return out->ptx ? BLK_SUCCESS : BLK_ERROR_COMPILE;
}

/* ---------------------------------------------------------------- launch */

static const char *arg_kind_name(blk_arg_kind k) {
    switch (k) {
    case BLK_ARG_PTR: return "a pointer";
    case BLK_ARG_I32: return "an i32";
    case BLK_ARG_U32: return "a u32";
    case BLK_ARG_I64: return "an i64";
    case BLK_ARG_F32: return "an f32";
    case BLK_ARG_U64: return "a u64";
    case BLK_ARG_F64: return "an f64";
    }
    return "an unknown kind";
}

/* A type's name for a message, formatted only when a check fails (a C11
 * temporary: valid to the end of the full expression that uses it). */
typedef struct {
    char s[32];
} TypeText;

static TypeText type_text(BlkType t) {
    TypeText r;
    type_str(t, r.s, sizeof r.s);
    return r;
}

/* Checks one argument against its parameter, and gives it as the devices
 * take it: a float as F64 (value.d), an integer as I64 with value.i
 * normalized to the parameter's type (a u64 as its bits). */
static blk_status check_arg(const blk_kernel *k, int i, const blk_arg *a, blk_arg *out) {
    const BirParam *p = &k->f->params[i];
    DType d = p->type.dtype;
    if ((unsigned)a->kind > BLK_ARG_F64)
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): unknown argument kind %d", k->f->name,
                    i, p->name, (int)a->kind);
    *out = *a;
    bool is_int_kind = a->kind == BLK_ARG_I32 || a->kind == BLK_ARG_U32 || a->kind == BLK_ARG_I64 || a->kind == BLK_ARG_U64;
    blk_arg_kind takes = param_arg_kind(p);
    if (takes == BLK_ARG_PTR) {
        if (a->kind != BLK_ARG_PTR)
            return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): expects a pointer (%s), got %s",
                        k->f->name, i, p->name, type_text(p->type).s, arg_kind_name(a->kind));
        if (p->is_none && a->value.ptr != 0)
            return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): the module was built with '%s' "
                            "None (-D %s.%s=None), so its argument must be a null pointer", k->f->name, i, p->name,
                            p->name, k->f->name, p->name);
        if (a->value.ptr == 0 && !p->is_none)
            return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): a null pointer", k->f->name, i,
                            p->name);
        int es = dtype_bytes(p->type.elem);
        if (a->value.ptr % (uint64_t)es)
            return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): 0x%llx is not aligned to its %s elements",
                        k->f->name, i, p->name, (unsigned long long)a->value.ptr, dtype_name(p->type.elem));
        if (p->align && a->value.ptr % (uint64_t)p->align)
            return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): declared @align(%lld) but 0x%llx is not",
                        k->f->name, i, p->name, (long long)p->align, (unsigned long long)a->value.ptr);
        return BLK_SUCCESS;
    }
    if (dtype_is_float(d)) { /* f32, f16, bf16 and f64 take blk_arg_f32 or blk_arg_f64, rounded at launch as `as` rounds */
        if (a->kind != BLK_ARG_F32 && a->kind != BLK_ARG_F64)
            return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): expects a float (%s: blk_arg_%s), got %s",
                        k->f->name, i, p->name, type_text(p->type).s, takes == BLK_ARG_F64 ? "f64" : "f32", arg_kind_name(a->kind));
        out->kind = BLK_ARG_F64;
        out->value.d = a->kind == BLK_ARG_F32 ? (double)a->value.f : a->value.d;
        return BLK_SUCCESS;
    }
    if (!is_int_kind)
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): expects an integer (%s), got %s",
                    k->f->name, i, p->name, type_text(p->type).s, arg_kind_name(a->kind));
    bool big = a->kind == BLK_ARG_U64 && a->value.u > (uint64_t)INT64_MAX; /* fits a u64 only */
    int64_t v = a->value.i;
    if (big ? d != DT_U64 : !dtype_fits_int(d, v)) {
        if (big)
            return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): %llu does not fit %s", k->f->name, i,
                            p->name, (unsigned long long)a->value.u, type_text(p->type).s);
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): %lld does not fit %s", k->f->name, i,
                    p->name, (long long)v, type_text(p->type).s);
    }
    if (p->multiple_of && (big ? a->value.u % (uint64_t)p->multiple_of : (uint64_t)(v % p->multiple_of)))
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): declared @multiple_of(%lld) but is %lld",
                    k->f->name, i, p->name, (long long)p->multiple_of, (long long)v);
    if (p->equal_one && (big || v != 1)) {
        char got[32];
        if (big) snprintf(got, sizeof got, "%llu", (unsigned long long)a->value.u);
        else snprintf(got, sizeof got, "%lld", (long long)v);
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): declared @equal(1) but is %s "
                        "(the kernel assumes a unit stride: pass contiguous data)", k->f->name, i, p->name, got);
    }
    out->kind = BLK_ARG_I64;
    return BLK_SUCCESS;
}

/* The facts of these arguments that the code may use (BlkFacts). */
static BlkFacts launch_facts(const BirFunction *f, const blk_arg *args) {
    BlkFacts facts = {0};
    for (int i = 0; i < f->nparams && i < 64; i++) {
        uint64_t bit = UINT64_C(1) << i;
        if (f->params[i].type.dtype == DT_PTR) {
            if (args[i].value.ptr % 16 == 0) facts.div16 |= bit;
            continue;
        }
        if (!dtype_is_int(f->params[i].type.dtype)) continue;
        uint64_t v = args[i].value.u; /* the remainders of 4, 8 and 16 are the same read as signed or unsigned */
        if (v % 16 == 0) facts.div16 |= bit;
        else if (v % 8 == 0) facts.div8 |= bit;
        else if (v % 4 == 0) facts.div4 |= bit;
        if (args[i].value.i == 1) facts.one |= bit;
    }
    return facts;
}

/* The device's code for these facts, loaded on first use and kept. */
static blk_status variant_for(blk_kernel *k, BlkFacts facts, void **code) {
    blk_module *m = k->module;
    pthread_mutex_lock(&m->lock);
    for (int v = 0; v < k->nvariants; v++) {
        if (blk_facts_equal(k->variants[v].facts, facts)) {
            *code = k->variants[v].code;
            pthread_mutex_unlock(&m->lock);
            return BLK_SUCCESS;
        }
    }
    blk_status s = BLK_SUCCESS;
    if (k->nvariants == k->cap) {
        int cap = k->cap ? k->cap * 2 : 4;
        Variant *grown = realloc(k->variants, (size_t)cap * sizeof *grown);
        if (!grown) s = blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
        else k->variants = grown, k->cap = cap;
    }
    BlkVariantSpec spec = {k, k->f->name, facts, m->cache_key, m->cache_key_len, m->auto_occupancy,
                           m->backend.persistent,
                           blk_jit_launches_after_previous(m->arch, k->f)};
    if (!s) s = m->ctx->dev->load(m->ctx, &spec, code);
    if (!s) k->variants[k->nvariants++] = (Variant){facts, *code, NULL};
    pthread_mutex_unlock(&m->lock);
    return s;
}

/* A launch's arguments, checked against the kernel's parameters into checked. */
static blk_status check_args(const blk_kernel *k, const blk_arg *args, int nargs, blk_arg *checked) {
    const BirFunction *f = k->f;
    blk_status s;
    if (nargs != f->nparams || (nargs && !args)) {
        char names[512] = "";
        for (int i = 0; i < f->nparams; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", f->params[i].name);
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s' takes %d argument%s (%s), got %d", f->name, f->nparams,
                        f->nparams == 1 ? "" : "s", names, args ? nargs : 0);
    }
    if (nargs > BLK_MAX_KERNEL_ARGS)
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s': more than %d arguments", f->name, BLK_MAX_KERNEL_ARGS);
    for (int i = 0; i < nargs; i++)
        if ((s = check_arg(k, i, &args[i], &checked[i]))) return s;
    return BLK_SUCCESS;
}

blk_status blk_kernel_launch_ptx(blk_kernel *k, const blk_arg *args, int nargs, const char **ptx) {
    if (!k || !ptx) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_kernel_launch_ptx: a NULL argument");
    if (!live_kernel(k)) return blk_fail(BLK_ERROR_INVALID_VALUE, "the kernel was destroyed with its module (or is not a kernel)");
    *ptx = NULL;
    blk_module *m = k->module;
    blk_status s = enter(m->ctx);
    blk_arg checked[BLK_MAX_KERNEL_ARGS];
    if (s || (s = check_args(k, args, nargs, checked))) return s;
    BlkFacts facts = launch_facts(k->f, checked);
    void *code;
    if ((s = variant_for(k, facts, &code))) return s;
    if (m->ctx->dev->code_ptx && (*ptx = m->ctx->dev->code_ptx(code))) return ok();
    /* a device that runs no PTX (the cpu): the PTX this launch would run on a GPU of the module's arch */
    pthread_mutex_lock(&m->lock);
    Variant *v = NULL;
    for (int i = 0; i < k->nvariants; i++)
        if (k->variants[i].code == code) v = &k->variants[i];
    if (v && !v->ptx) {
        BlkVariantSpec spec = {k, k->f->name, facts, m->cache_key, m->cache_key_len, m->auto_occupancy,
                               m->backend.persistent,
                               blk_jit_launches_after_previous(m->arch, k->f)};
        BlkKernelCode kc;
        if (!(s = blk_kernel_code(&spec, 0, &kc))) {
            if (!(v->ptx = blk_variant_contract(&spec, &kc, false))) s = blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
            free(kc.ptx);
        }
    }
    *ptx = v ? v->ptx : NULL;
    pthread_mutex_unlock(&m->lock);
    return s ? s : *ptx ? ok() : blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
}

blk_status blk_kernel_plan(blk_kernel *k, const blk_arg *args, int nargs, const char **plan) {
    if (!k || !plan || (!args && nargs)) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_kernel_plan: a NULL argument");
    if (!live_kernel(k)) return blk_fail(BLK_ERROR_INVALID_VALUE, "the kernel was destroyed with its module (or is not a kernel)");
    *plan = NULL;
    blk_module *m = k->module;
    BlkFacts facts = {0};
    if (args) {
        blk_status s = enter(m->ctx);
        blk_arg checked[BLK_MAX_KERNEL_ARGS];
        if (s || (s = check_args(k, args, nargs, checked))) return s;
        facts = launch_facts(k->f, checked);
    }
    pthread_mutex_lock(&m->lock);
    PlanText *p = k->plans;
    while (p && !blk_facts_equal(p->facts, facts)) p = p->next;
    blk_status s = BLK_SUCCESS;
    if (!p) {
        int64_t div[64] = {0};
        facts_div(k->f, facts, div);
        NvptxOptions bo = m->backend;
        bo.param_div = div;
        char err[8192];
        char *text = blk_jit_plan(m->comp, k->f->name, &bo, err, sizeof err);
        if (!text) s = blk_fail(BLK_ERROR_COMPILE, "kernel '%s': %s", k->f->name, err);
        else if (!(p = calloc(1, sizeof *p))) free(text), s = blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
        else *p = (PlanText){facts, text, k->plans}, k->plans = p;
    }
    if (p) *plan = p->text;
    pthread_mutex_unlock(&m->lock);
    return s ? s : ok();
}

blk_status blk_kernel_explore(blk_kernel *k, const blk_arg *args, int nargs, const char **html) {
    if (!k || !html || (!args && nargs)) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_kernel_explore: a NULL argument");
    if (!live_kernel(k)) return blk_fail(BLK_ERROR_INVALID_VALUE, "the kernel was destroyed with its module (or is not a kernel)");
    *html = NULL;
    const char *ptx, *plan;
    blk_status s = args ? blk_kernel_launch_ptx(k, args, nargs, &ptx) : blk_kernel_ptx(k, &ptx);
    if (s || (s = blk_kernel_plan(k, args, nargs, &plan))) return s;
    blk_module *m = k->module;
    pthread_mutex_lock(&m->lock);
    PageText *p = k->pages;
    while (p && !(p->ptx == ptx && p->plan == plan)) p = p->next;
    if (!p) {
        char *text = NULL, *sass = NULL, *failed = NULL, arch[32];
        size_t len = 0;
        /* ptxas's resources and the SASS, where CUDA's tools are installed, as blkc --explore has them */
        KernelResources *resources = NULL;
        int nresources = 0;
        const char *sass_tool = NULL;
        if (launch_contract_arch(ptx, arch, sizeof arch))
            cuda_explore_facts(ptx, arch, &resources, &nresources, &sass, &sass_tool, &failed);
        FILE *f = open_memstream(&text, &len);
        ExploreBuild build = {.ptx = ptx, .plans = &plan, .nplans = 1, .stats = failed, .resources = resources,
                              .nresources = nresources, .sass = sass, .sass_tool = sass_tool};
        bool written = f && explore_page(f, &m->comp->src, &build, NULL);
        if (f && fclose(f) != 0) written = false;
        ptxas_report_free(resources, nresources);
        free(sass), free(failed);
        if (written && (p = calloc(1, sizeof *p))) *p = (PageText){ptx, plan, text, k->pages}, k->pages = p;
        else free(text), s = blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    if (p) *html = p->html;
    pthread_mutex_unlock(&m->lock);
    return s ? s : ok();
}

blk_status blk_launch(blk_kernel *k, unsigned gx, unsigned gy, unsigned gz, const blk_arg *args, int nargs,
                      void *stream) {
    if (!k) return blk_fail(BLK_ERROR_INVALID_VALUE, "the kernel is NULL");
    if (!live_kernel(k)) return blk_fail(BLK_ERROR_INVALID_VALUE, "the kernel was destroyed with its module (or is not a kernel)");
    blk_context *ctx = k->module->ctx;
    blk_status s = enter(ctx);
    if (s) return s;
    const BirFunction *f = k->f;
    blk_arg checked[BLK_MAX_KERNEL_ARGS];
    if ((s = check_args(k, args, nargs, checked))) return s;
    BlkLaunch launch = {f, checked, {gx, gy, gz}, stream, NULL};
    if (!gx || !gy || !gz)
        return blk_fail(BLK_ERROR_BAD_GRID, "kernel '%s': the grid (%u, %u, %u) is empty", f->name, gx, gy, gz);
    if ((uint64_t)gx * gy > UINT64_MAX / gz)
        return blk_fail(BLK_ERROR_BAD_GRID, "kernel '%s': the grid (%u, %u, %u) has 2^64 programs or more", f->name,
                        gx, gy, gz);
    for (int d = 0; d < 3; d++)
        if (ctx->max_grid[d] > 0 && launch.grid[d] > (unsigned)ctx->max_grid[d])
            return blk_fail(BLK_ERROR_BAD_GRID, "kernel '%s': grid dimension %c is %u, the device allows %d", f->name,
                            "xyz"[d], launch.grid[d], ctx->max_grid[d]);
    if ((s = variant_for(k, launch_facts(f, checked), &launch.code))) return s;
    return done(ctx->dev->launch(ctx, &launch));
}

blk_status blk_launch_record_run(const blk_launch_record *r) {
    if (!r) return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_launch_record_run: the record is NULL");
    return blk_launch(r->kernel, r->grid[0], r->grid[1], r->grid[2], r->args, r->num_args, r->stream);
}

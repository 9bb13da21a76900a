/* contract.c: the launch contract of compiled kernels (launch.h): for each
 * kernel the block, the dynamic shared memory, the parameters in order with
 * what each argument must satisfy, and the parameters a launcher appends
 * (tensor maps and their validity bits, a persistent kernel's grid). The
 * PTX alone says none of this: its shared memory is `.extern` and `.maxntid`
 * is a bound, not the block a launch must use. */
#include <string.h>

#include "launch.h"

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

void launch_requirement(const BirParam *p, int64_t fact, LaunchRequirement *r) {
    *r = (LaunchRequirement){.align = 1, .multiple = 1};
    if (p->type.dtype == DT_PTR) {
        r->align = dtype_bytes(p->type.elem);
        if (p->align > r->align) r->align = p->align, r->align_declared = true;
        if (fact > r->align) r->align = fact, r->align_declared = false;
        return;
    }
    if (!dtype_is_int(p->type.dtype)) return;
    if (p->multiple_of > 1) r->multiple = p->multiple_of, r->multiple_declared = true;
    if (fact > 1 && r->multiple % fact) { /* both hold: their least common multiple */
        r->multiple = r->multiple / gcd64(r->multiple, fact) * fact;
        r->multiple_declared = false;
    }
    r->one = p->equal_one || fact == NVPTX_PARAM_ONE;
    r->one_declared = p->equal_one;
}

const char *launch_ptx_type(DType d) {
    switch (d) {
    case DT_PTR: return ".u64";
    case DT_F16: case DT_BF16: return ".b16";
    case DT_F32: return ".f32";
    case DT_F64: return ".f64";
    default: break;
    }
    switch (dtype_bits(d)) {
    case 1: case 8: return ".u8";
    case 16: return ".u16";
    case 32: return ".u32";
    default: return ".u64";
    }
}

const char *launch_c_type(DType d) {
    switch (d) {
    case DT_PTR: return "CUdeviceptr";
    case DT_I1: return "bool";
    case DT_F16: case DT_BF16: case DT_F32: return "float";
    case DT_F64: return "double";
    default: break;
    }
    bool u = dtype_is_unsigned(d);
    switch (dtype_bits(d)) {
    case 8: return u ? "uint8_t" : "int8_t";
    case 16: return u ? "uint16_t" : "int16_t";
    case 32: return u ? "uint32_t" : "int32_t";
    default: return u ? "uint64_t" : "int64_t";
    }
}

int launch_param_bytes(DType d) {
    if (d == DT_PTR) return 8;
    if (d == DT_I1) return 1;
    return dtype_bytes(d);
}

const BirFunction *launch_function(const LaunchBuild *b, const NvptxKernel *k) {
    for (int i = 0; i < b->bir->nkernels; i++)
        if (strcmp(b->bir->kernels[i]->name, k->name) == 0) return b->bir->kernels[i];
    return NULL;
}

const char *launch_swizzle_name(int bytes) {
    return bytes == 128 ? "CU_TENSOR_MAP_SWIZZLE_128B" : bytes == 64 ? "CU_TENSOR_MAP_SWIZZLE_64B"
           : bytes == 32 ? "CU_TENSOR_MAP_SWIZZLE_32B" : "CU_TENSOR_MAP_SWIZZLE_NONE";
}

/* A tensor map's extent along its columns (axis 1) or rows (axis 0), as
 * nvptx_tma_extents computes it: a bound of the kernel's mask (a parameter
 * times a scale, or a constant), else 2^31 columns, and rows 2^31 / stride
 * with bounded columns or the box's rows. */
static void bound_text(const BirFunction *f, int param, int64_t scale, char *buf, size_t size) {
    nvptx_tma_bound_text(param >= 0 ? f->params[param].name : NULL, scale, buf, size);
}

static void extent_text(const BirFunction *f, const NvptxTensorMap *t, int axis, char *buf, size_t size) {
    if (axis == 1 && t->cols_scale) bound_text(f, t->cols_param, t->cols_scale, buf, size);
    else if (axis == 1) snprintf(buf, size, "2^31");
    else if (t->rows_scale) bound_text(f, t->rows_param, t->rows_scale, buf, size);
    else if (t->cols_scale) snprintf(buf, size, "2^31 / the stride in elements");
    else snprintf(buf, size, "%d", t->box_rows);
}

/* A parameter's type as blk spells it, and what its argument must satisfy. */
static void param_facts(const BirParam *p, int64_t fact, char *type, size_t size, LaunchRequirement *r) {
    type_str(p->type, type, size);
    launch_requirement(p, fact, r);
}

/* "aligned to 16 bytes (@align(16))" and the like, into buf. */
static const char *requirement_text(const BirParam *p, const LaunchRequirement *r, char *buf, size_t size) {
    buf[0] = 0;
    size_t n = 0;
    if (p->type.dtype == DT_PTR && p->is_none) {
        snprintf(buf, size, "null: built with it None, never read");
    } else if (p->type.dtype == DT_PTR) {
        n += (size_t)snprintf(buf, size, "not null, aligned to %lld bytes", (long long)r->align);
        if (r->align > dtype_bytes(p->type.elem))
            snprintf(buf + n, size - n, " (%s)", r->align_declared ? "declared @align" : "compiled assuming it");
    } else if (r->one) {
        snprintf(buf, size, "equal to 1 (%s)", r->one_declared ? "declared @equal(1)" : "compiled assuming it");
    } else if (r->multiple > 1) {
        snprintf(buf, size, "a multiple of %lld (%s)", (long long)r->multiple,
                 r->multiple_declared ? "declared @multiple_of" : "compiled assuming it");
    }
    return buf;
}

/* The comment's lines launch_contract_comment writes and the readers below
 * find: one format, in this file. */
#define CONTRACT_ARCH "// arch "
#define CONTRACT_KERNEL "//\n// kernel "
#define CONTRACT_BLOCK_HEAD "//   block: "
#define CONTRACT_BLOCK CONTRACT_BLOCK_HEAD "%d threads (%d warp%s), 1, 1: exactly this; .maxntid is only a bound\n"
#define CONTRACT_SHARED "//   dynamic shared memory: "

/* The end of the contract: the first line that is no comment. */
static const char *contract_end(const char *ptx) {
    const char *p = ptx;
    while (p[0] == '/' && p[1] == '/') {
        const char *eol = strchr(p, '\n');
        if (!eol) return p + strlen(p);
        p = eol + 1;
    }
    return p;
}

bool launch_contract_arch(const char *ptx, char *arch, size_t size) {
    const char *end = contract_end(ptx), *at = strstr(ptx, CONTRACT_ARCH);
    if (!at || at >= end || size < 2) return false;
    at += strlen(CONTRACT_ARCH);
    size_t n = strcspn(at, ":\n");
    if (n >= size) return false;
    memcpy(arch, at, n);
    arch[n] = 0;
    return n > 0;
}

bool launch_contract_kernel(const char *ptx, const char *kernel, int *warps, long long *shared_bytes) {
    const char *end = contract_end(ptx), *at = ptx;
    size_t n = strlen(kernel);
    while ((at = strstr(at, CONTRACT_KERNEL)) && at < end) {
        at += strlen(CONTRACT_KERNEL);
        if (strncmp(at, kernel, n) != 0 || at[n] != '\n') continue;
        const char *block = at + n + 1, *eol = strchr(block, '\n'), *shared = eol ? eol + 1 : NULL;
        int threads;
        if (!shared || strncmp(block, CONTRACT_BLOCK_HEAD, strlen(CONTRACT_BLOCK_HEAD)) != 0 ||
            sscanf(block + strlen(CONTRACT_BLOCK_HEAD), "%d threads", &threads) != 1 ||
            strncmp(shared, CONTRACT_SHARED, strlen(CONTRACT_SHARED)) != 0 ||
            sscanf(shared + strlen(CONTRACT_SHARED), "%lld bytes", shared_bytes) != 1)
            return false;
        *warps = threads / 32;
        return true;
    }
    return false;
}

void launch_contract_comment(FILE *out, const LaunchBuild *b) {
    const NvptxArch *a = nvptx_arch(b->arch);
    fprintf(out, "// blkc %s launch contract: how to launch the kernels below (docs/runtime.md, \"Ahead of time\").\n"
                 "// `blkc --emit=launch` gives it as JSON; `blkc --emit=c` writes a C launcher that follows it.\n",
            BLKC_VERSION);
    fprintf(out, CONTRACT_ARCH "%s%s\n", b->arch,
            a && a->arch_specific ? ": loads only on a device of exactly that compute capability" : "");
    for (int i = 0; i < b->out->nkernels; i++) {
        const NvptxKernel *k = &b->out->kernels[i];
        const BirFunction *f = launch_function(b, k);
        if (!f) continue;
        fprintf(out, CONTRACT_KERNEL "%s\n", k->name);
        fprintf(out, CONTRACT_BLOCK, 32 * k->num_warps, k->num_warps, k->num_warps == 1 ? "" : "s");
        if (!k->shared_bytes)
            fputs(CONTRACT_SHARED "0 bytes\n", out);
        else if (k->shared_bytes <= LAUNCH_DEFAULT_SHARED_BYTES)
            fprintf(out, CONTRACT_SHARED "%lld bytes: pass them as cuLaunchKernel's sharedMemBytes "
                         "(blk_shared[] is .extern:\n//     a launch with fewer bytes faults)\n", (long long)k->shared_bytes);
        else
            fprintf(out, CONTRACT_SHARED "%lld bytes, over 48 KiB: first set\n"
                         "//     cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, %lld),\n"
                         "//     then pass them as cuLaunchKernel's sharedMemBytes\n",
                    (long long)k->shared_bytes, (long long)k->shared_bytes);
        if (k->persistent)
            fputs("//   grid: persistent: launch min(programs, SMs x cuOccupancyMaxActiveBlocksPerMultiprocessor) "
                  "programs in x;\n//     the kernel runs the grid given in its last three parameters\n", out);
        else
            fputs("//   grid: one program per program id (x, y, z as program_id(0), (1), (2) count them)\n", out);
        if (nvptx_launches_after_previous(a, f))
            fputs("//   programmatic dependent launch: the kernel waits for the grid before it (gdc_wait), so a launch\n"
                  "//     may set CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (cuLaunchKernelEx) to start while\n"
                  "//     that grid finishes; the runtime does; without it the wait returns at once\n", out);
        fputs("//   parameters, in order (the kernel's runtime parameters; const ones are compiled in):\n", out);
        char req[160];
        for (int p = 0; p < f->nparams; p++) {
            const BirParam *prm = &f->params[p];
            char type[48];
            LaunchRequirement r;
            param_facts(prm, k->facts[p], type, sizeof type, &r);
            requirement_text(prm, &r, req, sizeof req);
            fprintf(out, "//     %2d %-12s %-6s %s%s%s\n", p, prm->name, type, launch_ptx_type(prm->type.dtype),
                    req[0] ? strlen(launch_ptx_type(prm->type.dtype)) == 3 ? "   " : "  " : "", req);
        }
        int next = f->nparams;
        for (int m = 0; m < k->tensor_maps.count; m++) {
            const NvptxTensorMap *t = &k->tensor_maps.map[m];
            char cols[96], rows[96];
            extent_text(f, t, 1, cols, sizeof cols);
            extent_text(f, t, 0, rows, sizeof rows);
            fprintf(out, "//     %2d tensor map %d: a CUtensorMap (128 bytes, by value), cuTensorMapEncodeTiled("
                         "%s, rank 2,\n//        address %s, dims {%s, %s}, strides {", next++, m,
                    t->elem_bytes == 1 ? "UINT8" : "UINT16", f->params[t->base_param].name, cols, rows);
            if (t->stride_param >= 0)
                fprintf(out, "%s x %lld x %d bytes", f->params[t->stride_param].name, (long long)t->stride_scale,
                        t->elem_bytes);
            else
                fprintf(out, "%lld x %d bytes", (long long)t->stride_scale, t->elem_bytes);
            fprintf(out, "}, box {%d, %d}, element strides {1, 1},\n//        INTERLEAVE_NONE, %s, "
                         "L2_PROMOTION_L2_128B, FLOAT_OOB_FILL_NONE)\n",
                    t->box_inner, t->box_rows, launch_swizzle_name(t->swizzle_bytes));
        }
        if (k->tensor_maps.count)
            fprintf(out, "//     %2d u32: bit j set when tensor map j was made (a clear bit: that load copies by "
                         "cp.async)\n", next++);
        if (k->persistent) {
            fprintf(out, "//     %2d u32, %d u32, %d u32: the grid's x, y and z (programs to run)\n", next, next + 1,
                    next + 2);
            next += 3;
        }
        if (k->notes && k->notes[0]) {
            fputs("//   code:\n", out);
            for (const char *l = k->notes; *l;) {
                const char *e = strchr(l, '\n');
                size_t len = e ? (size_t)(e - l) : strlen(l);
                fprintf(out, "//   %.*s\n", (int)len, l);
                l += len + (e != NULL);
            }
        }
    }
    fputs("//\n", out);
}

/* A JSON string (names and notes: ASCII, but escaped whatever they hold). */
static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

/* The same as JSON: a number, {"param": NAME or null, "scale": K} for a
 * bound, or {"elements_over_stride": 2^31}. */
static void extent_json(FILE *out, const BirFunction *f, const NvptxTensorMap *t, int axis) {
    int param = axis ? t->cols_param : t->rows_param;
    int64_t scale = axis ? t->cols_scale : t->rows_scale;
    if (scale) {
        fputs("{\"param\": ", out);
        if (param >= 0) json_string(out, f->params[param].name);
        else fputs("null", out);
        fprintf(out, ", \"scale\": %lld}", (long long)scale);
    } else if (axis) {
        fprintf(out, "%lld", (long long)NVPTX_TMA_COLUMNS);
    } else if (t->cols_scale) {
        fprintf(out, "{\"elements_over_stride\": %lld}", (long long)NVPTX_TMA_COLUMNS);
    } else {
        fprintf(out, "%d", t->box_rows);
    }
}

void launch_contract_json(FILE *out, const LaunchBuild *b) {
    const NvptxOptions *o = b->options;
    fprintf(out, "{\n  \"blkc\": \"%s\",\n  \"arch\": ", BLKC_VERSION);
    json_string(out, b->arch);
    fputs(",\n  \"options\": {", out);
    const char *sep = "";
#define BLK_INT(name, cli, lo, hi, rule, value, help) fprintf(out, "%s\"" #name "\": %d", sep, o->name), sep = ", ";
#define BLK_FLAG(name, cli, help) fprintf(out, "%s\"" #name "\": %s", sep, o->name ? "true" : "false"), sep = ", ";
#include "options.def"
#undef BLK_FLAG
#undef BLK_INT
    fputs("},\n", out);
    fputs("  \"defines\": {", out);
    for (int d = 0; d < b->ndefs; d++) {
        fputs(d ? ", " : "", out);
        json_string(out, b->defs[d].name);
        fputs(": ", out);
        json_string(out, b->defs[d].value);
    }
    fputs("},\n  \"kernels\": [", out);
    for (int i = 0; i < b->out->nkernels; i++) {
        const NvptxKernel *k = &b->out->kernels[i];
        const BirFunction *f = launch_function(b, k);
        if (!f) continue;
        fputs(i ? ",\n    {" : "\n    {", out);
        fputs("\"name\": ", out);
        json_string(out, k->name);
        fprintf(out, ", \"threads\": %d, \"num_warps\": %d, \"shared_bytes\": %lld, \"shared_opt_in\": %s, "
                     "\"persistent\": %s, \"min_regs\": %d,\n     \"params\": [",
                32 * k->num_warps, k->num_warps, (long long)k->shared_bytes,
                k->shared_bytes > LAUNCH_DEFAULT_SHARED_BYTES ? "true" : "false", k->persistent ? "true" : "false",
                k->min_regs);
        for (int p = 0; p < f->nparams; p++) {
            const BirParam *prm = &f->params[p];
            char type[48];
            LaunchRequirement r;
            param_facts(prm, k->facts[p], type, sizeof type, &r);
            fputs(p ? ",\n       {" : "\n       {", out);
            fputs("\"name\": ", out);
            json_string(out, prm->name);
            fprintf(out, ", \"type\": \"%s\", \"ptx_type\": \"%s\", \"bytes\": %d", type, launch_ptx_type(prm->type.dtype),
                    launch_param_bytes(prm->type.dtype));
            if (prm->type.dtype == DT_PTR && prm->is_none)
                fputs(", \"none\": true", out);
            else if (prm->type.dtype == DT_PTR)
                fprintf(out, ", \"align\": %lld, \"declared\": %s", (long long)r.align, r.align_declared ? "true" : "false");
            else if (dtype_is_int(prm->type.dtype))
                fprintf(out, ", \"multiple_of\": %lld, \"equal_one\": %s", (long long)r.multiple, r.one ? "true" : "false");
            fputc('}', out);
        }
        fputs("],\n     \"appended\": [", out);
        int next = f->nparams, n = 0;
        for (int m = 0; m < k->tensor_maps.count; m++, n++) {
            const NvptxTensorMap *t = &k->tensor_maps.map[m];
            fprintf(out, "%s{\"index\": %d, \"kind\": \"tensor_map\", \"base\": ", n ? ",\n       " : "\n       ", next++);
            json_string(out, f->params[t->base_param].name);
            fputs(", \"stride\": ", out);
            if (t->stride_param >= 0) json_string(out, f->params[t->stride_param].name);
            else fputs("null", out);
            fprintf(out, ", \"stride_scale\": %lld, \"element_bytes\": %d, \"dims\": [", (long long)t->stride_scale,
                    t->elem_bytes);
            extent_json(out, f, t, 1);
            fputs(", ", out);
            extent_json(out, f, t, 0);
            fprintf(out, "], \"box\": [%d, %d], \"swizzle_bytes\": %d}", t->box_inner, t->box_rows, t->swizzle_bytes);
        }
        if (k->tensor_maps.count)
            fprintf(out, "%s{\"index\": %d, \"kind\": \"tensor_maps_made\", \"ptx_type\": \".u32\"}",
                    n++ ? ",\n       " : "\n       ", next++);
        for (int g = 0; k->persistent && g < 3; g++)
            fprintf(out, "%s{\"index\": %d, \"kind\": \"grid_%c\", \"ptx_type\": \".u32\"}",
                    n++ ? ",\n       " : "\n       ", next++, "xyz"[g]);
        fputs("],\n     \"notes\": [", out);
        int nn = 0;
        for (const char *l = k->notes ? k->notes : ""; *l;) {
            const char *e = strchr(l, '\n');
            size_t len = e ? (size_t)(e - l) : strlen(l);
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
            fputs(nn++ ? ", " : "", out);
            json_string(out, line[0] == ' ' && line[1] == ' ' ? line + 2 : line);
            l += len + (e != NULL);
        }
        fputs("]}", out);
    }
    fputs("\n  ]\n}\n", out);
}

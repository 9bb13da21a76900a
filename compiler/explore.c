/* explore.c: blkc --explore: one self-contained HTML page to study a module's
 * kernels: the blk source, the backend's plan, the PTX and (where a
 * disassembler is installed) the SASS in columns, every line of each tied to
 * the source line it came from (the plan's "line N", the PTX's .loc
 * directives, nvdisasm's //## File comments). Hovering or clicking a line
 * lights up everything of its source line. Above them: the launch contract,
 * each kernel's resources as a chart of what limits its programs an SM, and a
 * table of each source line's instructions by kind with the plan's notes on
 * it. No network: the page carries its style and script. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "launch.h"

/* What a PTX instruction does, by the opcode's first characters; the first
 * matching row wins, so longer prefixes come before shorter ones. */
typedef enum { KIND_MEMORY, KIND_TENSOR, KIND_MATH, KIND_CONVERT, KIND_CONTROL, KIND_SYNC, KIND_WARP, KIND_MOVE,
               KIND_OTHER, KIND_COUNT } InstrKind;

static const char *const kind_names[KIND_COUNT] = {
    [KIND_MEMORY] = "memory", [KIND_TENSOR] = "tensor core", [KIND_MATH] = "math", [KIND_CONVERT] = "convert",
    [KIND_CONTROL] = "control", [KIND_SYNC] = "barrier", [KIND_WARP] = "warp", [KIND_MOVE] = "move",
    [KIND_OTHER] = "other",
};
static const char *const kind_classes[KIND_COUNT] = {
    [KIND_MEMORY] = "mem", [KIND_TENSOR] = "tc", [KIND_MATH] = "math", [KIND_CONVERT] = "cvt",
    [KIND_CONTROL] = "ctl", [KIND_SYNC] = "sync", [KIND_WARP] = "warp", [KIND_MOVE] = "mov", [KIND_OTHER] = "oth",
};

static const struct {
    const char *prefix;
    InstrKind kind;
} opcode_kinds[] = {
    {"wgmma.mma_async", KIND_TENSOR}, {"wgmma.", KIND_SYNC}, {"mma.", KIND_TENSOR},
    {"ld.param", KIND_MOVE}, {"ldmatrix", KIND_MEMORY}, {"stmatrix", KIND_MEMORY},
    {"ld.", KIND_MEMORY}, {"ldu.", KIND_MEMORY}, {"st.", KIND_MEMORY}, {"cp.", KIND_MEMORY},
    {"atom.", KIND_MEMORY}, {"red.", KIND_MEMORY}, {"prefetch", KIND_MEMORY}, {"multimem.", KIND_MEMORY},
    {"cvta", KIND_MOVE}, {"cvt", KIND_CONVERT},
    {"bra", KIND_CONTROL}, {"ret", KIND_CONTROL}, {"call", KIND_CONTROL}, {"exit", KIND_CONTROL},
    {"trap", KIND_CONTROL}, {"brx", KIND_CONTROL},
    {"bar.", KIND_SYNC}, {"barrier", KIND_SYNC}, {"membar", KIND_SYNC}, {"fence", KIND_SYNC},
    {"mbarrier", KIND_SYNC}, {"elect", KIND_SYNC}, {"griddepcontrol", KIND_SYNC}, {"setmaxnreg", KIND_SYNC},
    {"shfl", KIND_WARP}, {"vote", KIND_WARP}, {"redux", KIND_WARP}, {"match", KIND_WARP}, {"activemask", KIND_WARP},
    {"mov", KIND_MOVE}, {"prmt", KIND_MOVE}, {"selp", KIND_MATH}, {"setp", KIND_MATH}, {"set.", KIND_MATH},
    {"add", KIND_MATH}, {"sub", KIND_MATH}, {"mul", KIND_MATH}, {"mad", KIND_MATH}, {"fma", KIND_MATH},
    {"div", KIND_MATH}, {"rem", KIND_MATH}, {"rcp", KIND_MATH}, {"sqrt", KIND_MATH}, {"rsqrt", KIND_MATH},
    {"ex2", KIND_MATH}, {"lg2", KIND_MATH}, {"sin", KIND_MATH}, {"cos", KIND_MATH}, {"tanh", KIND_MATH},
    {"min", KIND_MATH}, {"max", KIND_MATH}, {"abs", KIND_MATH}, {"neg", KIND_MATH}, {"and", KIND_MATH},
    {"or", KIND_MATH}, {"xor", KIND_MATH}, {"not", KIND_MATH}, {"shl", KIND_MATH}, {"shr", KIND_MATH},
    {"shf", KIND_MATH}, {"lop3", KIND_MATH}, {"popc", KIND_MATH}, {"clz", KIND_MATH}, {"brev", KIND_MATH},
    {"bfe", KIND_MATH}, {"bfi", KIND_MATH}, {"copysign", KIND_MATH}, {"testp", KIND_MATH},
};

static InstrKind instr_kind(const char *opcode, size_t len) {
    for (size_t i = 0; i < sizeof opcode_kinds / sizeof *opcode_kinds; i++) {
        size_t n = strlen(opcode_kinds[i].prefix);
        if (n <= len && memcmp(opcode, opcode_kinds[i].prefix, n) == 0) return opcode_kinds[i].kind;
    }
    return KIND_OTHER;
}

/* SASS opcodes by kind, by the name before the first '.' (HGMMA.64x128x16
 * is HGMMA); what is not here is math. */
static const struct {
    const char *name;
    InstrKind kind;
} sass_kinds[] = {
    {"HGMMA", KIND_TENSOR}, {"HMMA", KIND_TENSOR}, {"IMMA", KIND_TENSOR}, {"QGMMA", KIND_TENSOR},
    {"IGMMA", KIND_TENSOR}, {"BGMMA", KIND_TENSOR}, {"DMMA", KIND_TENSOR},
    {"LDG", KIND_MEMORY}, {"STG", KIND_MEMORY}, {"LDS", KIND_MEMORY}, {"STS", KIND_MEMORY}, {"LDL", KIND_MEMORY},
    {"STL", KIND_MEMORY}, {"LD", KIND_MEMORY}, {"ST", KIND_MEMORY}, {"LDSM", KIND_MEMORY}, {"STSM", KIND_MEMORY},
    {"LDGSTS", KIND_MEMORY}, {"ATOM", KIND_MEMORY}, {"ATOMS", KIND_MEMORY}, {"ATOMG", KIND_MEMORY},
    {"RED", KIND_MEMORY}, {"REDG", KIND_MEMORY}, {"REDAS", KIND_MEMORY}, {"UTMALDG", KIND_MEMORY},
    {"UTMASTG", KIND_MEMORY}, {"UTMAREDG", KIND_MEMORY}, {"UTMAPF", KIND_MEMORY}, {"UBLKCP", KIND_MEMORY},
    {"UBLKRED", KIND_MEMORY}, {"UBLKPF", KIND_MEMORY}, {"CCTL", KIND_MEMORY}, {"LDC", KIND_MOVE},
    {"ULDC", KIND_MOVE}, {"BAR", KIND_SYNC}, {"SYNCS", KIND_SYNC}, {"MEMBAR", KIND_SYNC}, {"FENCE", KIND_SYNC},
    {"DEPBAR", KIND_SYNC}, {"LDGDEPBAR", KIND_SYNC}, {"WARPGROUP", KIND_SYNC}, {"WARPSYNC", KIND_SYNC},
    {"ERRBAR", KIND_SYNC}, {"UTMACMDFLUSH", KIND_SYNC}, {"USETMAXREG", KIND_SYNC}, {"ACQBULK", KIND_SYNC},
    {"BRA", KIND_CONTROL}, {"BRX", KIND_CONTROL}, {"JMP", KIND_CONTROL}, {"JMX", KIND_CONTROL},
    {"EXIT", KIND_CONTROL}, {"RET", KIND_CONTROL}, {"CALL", KIND_CONTROL}, {"BSSY", KIND_CONTROL},
    {"BSYNC", KIND_CONTROL}, {"BREAK", KIND_CONTROL}, {"BPT", KIND_CONTROL}, {"YIELD", KIND_CONTROL},
    {"NOP", KIND_OTHER}, {"SHFL", KIND_WARP}, {"VOTE", KIND_WARP}, {"VOTEU", KIND_WARP}, {"REDUX", KIND_WARP},
    {"MATCH", KIND_WARP}, {"ELECT", KIND_WARP}, {"F2F", KIND_CONVERT}, {"F2I", KIND_CONVERT},
    {"I2F", KIND_CONVERT}, {"F2FP", KIND_CONVERT}, {"I2FP", KIND_CONVERT}, {"FRND", KIND_CONVERT},
    {"I2I", KIND_CONVERT}, {"I2IP", KIND_CONVERT}, {"MOV", KIND_MOVE}, {"UMOV", KIND_MOVE}, {"S2R", KIND_MOVE},
    {"S2UR", KIND_MOVE}, {"CS2R", KIND_MOVE}, {"R2UR", KIND_MOVE}, {"R2P", KIND_MOVE}, {"P2R", KIND_MOVE},
    {"B2R", KIND_MOVE}, {"PRMT", KIND_MOVE}, {"UPRMT", KIND_MOVE},
};

static InstrKind sass_kind(const char *opcode, size_t len) {
    size_t base = 0;
    while (base < len && opcode[base] != '.') base++;
    for (size_t i = 0; i < sizeof sass_kinds / sizeof *sass_kinds; i++)
        if (strlen(sass_kinds[i].name) == base && memcmp(opcode, sass_kinds[i].name, base) == 0)
            return sass_kinds[i].kind;
    return KIND_MATH;
}

/* A SASS instruction line, nvdisasm's or cuobjdump's: its address as a
 * comment, then the instruction (`@!P0 LDG.E.128 R4, desc[UR4][R2.64] ;`).
 * Returns its opcode (*op_len long, with modifiers) and where the
 * instruction starts (*text); NULL for any other line. */
static const char *sass_opcode(const char *line, size_t len, size_t *op_len, const char **text) {
    const char *end = line + len, *p = line;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (end - p < 5 || p[0] != '/' || p[1] != '*' || !isxdigit((unsigned char)p[2])) return NULL;
    p += 2;
    while (p < end && isxdigit((unsigned char)*p)) p++;
    if (end - p < 2 || p[0] != '*' || p[1] != '/') return NULL;
    p += 2;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    *text = p;
    if (p < end && *p == '@') { /* a predicate guards it */
        while (p < end && *p != ' ') p++;
        while (p < end && *p == ' ') p++;
    }
    const char *e = p;
    while (e < end && (isalnum((unsigned char)*e) || *e == '_' || *e == '.')) e++;
    if (e == p || !isupper((unsigned char)*p)) return NULL;
    *op_len = (size_t)(e - p);
    return p;
}

/* Whether a SASS line is nvdisasm's `//## File "x.blk", line N`; if so,
 * *current becomes N. */
static bool sass_line_info(const char *line, size_t len, unsigned nlines, unsigned *current) {
    const char *end = line + len;
    while (line < end && (*line == ' ' || *line == '\t')) line++;
    if (end - line < 10 || memcmp(line, "//## File ", 10) != 0) return false;
    static const char mark[] = "\", line ";
    for (const char *at = line + 10; at + sizeof mark - 1 < end; at++) /* within this line only */
        if (memcmp(at, mark, sizeof mark - 1) == 0) {
            unsigned long l = strtoul(at + sizeof mark - 1, NULL, 10);
            if (l && l <= nlines) *current = (unsigned)l;
            break;
        }
    return true;
}

/* Whether a SASS line begins a kernel's code (nvdisasm's section banner,
 * cuobjdump's "Function :"): the line before it belongs to no kernel. */
static bool sass_kernel_start(const char *line) {
    while (*line == ' ' || *line == '\t') line++;
    return strncmp(line, "//-------------------", 20) == 0 || strncmp(line, "Function : ", 11) == 0;
}

static void put_escaped(FILE *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(s[i], out); break;
        }
    }
}

/* The lines of a text, one at a time: *line and *len, without the newline. */
static bool next_line(const char **at, const char **line, size_t *len) {
    if (!**at) return false;
    *line = *at;
    const char *eol = strchr(*at, '\n');
    *len = eol ? (size_t)(eol - *at) : strlen(*at);
    *at = eol ? eol + 1 : *at + *len;
    return true;
}

/* One line of a column: its source line (0: none, the prologue), its colour band from it. */
static void put_line(FILE *out, const char *cls, unsigned src_line, const char *text, size_t len) {
    if (src_line)
        fprintf(out, "<span class=\"%s\" data-l=\"%u\" style=\"--h:%u\">", cls, src_line, (src_line * 67u) % 360u);
    else
        fprintf(out, "<span class=\"%s\" data-l=\"0\">", cls);
    put_escaped(out, text, len);
    fputs("\n</span>", out); /* inside: between block spans it would draw an empty line */
}

/* The source line a plan line speaks of: "line N" anywhere in it, or "// N:"
 * (the block IR's source comments); 0 for none. */
static unsigned plan_line_source(const char *line, size_t len) {
    const char *end = line + len;
    for (const char *p = line; p + 5 < end; p++) {
        if (memcmp(p, "line ", 5) == 0 && (p == line || p[-1] == ' ' || p[-1] == '(') && p[5] >= '0' && p[5] <= '9')
            return (unsigned)strtoul(p + 5, NULL, 10);
    }
    const char *t = line;
    while (t < end && *t == ' ') t++;
    if (end - t > 3 && t[0] == '/' && t[1] == '/' && t[2] == ' ' && t[3] >= '0' && t[3] <= '9') {
        char *after;
        unsigned long n = strtoul(t + 3, &after, 10);
        if (after < end && *after == ':') return (unsigned)n;
    }
    return 0;
}

/* Whether a plan line is an indented note ("  remark: ..."): it belongs to
 * the entry above it. */
static bool plan_remark(const char *line, size_t len) { return len >= 8 && memcmp(line, "  remark", 8) == 0; }

/* A PTX statement's opcode (past a predicate), or NULL for what is not an
 * instruction: blank, a comment, a directive, a label. */
static const char *statement_opcode(const char *p, const char *end, size_t *op_len) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p == end || *p == '/' || *p == '.') return NULL;
    const char *e = p;
    while (e < end && *e != ' ' && *e != '\t' && *e != ';') e++;
    if (e > p && e[-1] == ':') return NULL; /* a label */
    if (*p == '@') { /* a predicate guards it: the opcode follows */
        p = e;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        e = p;
        while (e < end && *e != ' ' && *e != '\t' && *e != ';') e++;
    }
    if (e == p || *p < 'a' || *p > 'z') return NULL;
    *op_len = (size_t)(e - p);
    return p;
}

/* The instructions of one PTX line, counted by kind into counts (an inline
 * PTX block, `{ .reg ...; setp ...; wgmma ...; }`, holds several); returns
 * how many. */
static unsigned line_instructions(const char *line, size_t len, unsigned counts[KIND_COUNT]) {
    const char *end = line + len, *p = line;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p < end && *p == '/') return 0; /* a comment line */
    unsigned n = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '{' || *p == '}')) p++;
        const char *stop = p;
        while (stop < end && *stop != ';') stop++;
        size_t op_len;
        const char *op = statement_opcode(p, stop, &op_len);
        if (op) counts[instr_kind(op, op_len)]++, n++;
        p = stop < end ? stop + 1 : end;
    }
    return n;
}

/* The kind a line of several instructions is shown as: the costliest. */
static InstrKind line_kind(const unsigned counts[KIND_COUNT]) {
    static const InstrKind by_weight[] = {KIND_TENSOR, KIND_MEMORY, KIND_SYNC, KIND_WARP, KIND_CONTROL,
                                          KIND_CONVERT, KIND_MATH, KIND_MOVE, KIND_OTHER};
    for (size_t i = 0; i < sizeof by_weight / sizeof *by_weight; i++)
        if (counts[by_weight[i]]) return by_weight[i];
    return KIND_OTHER;
}

/* Whether a PTX line is a .loc directive; if so, *current becomes its source
 * line (line 0, code of no line, keeps the one before). */
static bool loc_directive(const char *line, unsigned nlines, unsigned *current) {
    unsigned file, l;
    while (*line == ' ' || *line == '\t') line++;
    if (strncmp(line, ".loc", 4) != 0 || sscanf(line, ".loc %u %u", &file, &l) != 2) return false;
    if (l && l <= nlines) *current = l;
    return true;
}

/* Whether a PTX line begins a kernel or function: code before its first .loc
 * is its prologue, not the line of the code above it. */
static bool ptx_kernel_start(const char *line) {
    while (*line == ' ' || *line == '\t') line++;
    if (strncmp(line, ".visible ", 9) == 0) line += 9;
    else if (strncmp(line, ".weak ", 6) == 0) line += 6;
    return strncmp(line, ".entry ", 7) == 0 || strncmp(line, ".func ", 6) == 0;
}

/* The next line of a PTX text that is no .loc directive, *current its
 * source line (0 before a kernel's first .loc: its prologue). */
static bool next_ptx_line(const char **at, unsigned nlines, unsigned *current, const char **line, size_t *len) {
    while (next_line(at, line, len)) {
        if (ptx_kernel_start(*line)) *current = 0;
        if (!loc_directive(*line, nlines, current)) return true;
    }
    return false;
}

/* The same for a disassembler's text: its //## File lines are what set
 * *current (0 before a kernel's first one, and throughout cuobjdump's). */
static bool next_sass_line(const char **at, unsigned nlines, unsigned *current, const char **line, size_t *len) {
    while (next_line(at, line, len)) {
        if (sass_kernel_start(*line)) *current = 0;
        if (!sass_line_info(*line, *len, nlines, current)) return true;
    }
    return false;
}

/* The source line a plan line belongs to: the "line N" it names, or for an
 * indented remark the entry's above it (*last, which it updates). */
static unsigned plan_line_of(const char *line, size_t len, unsigned *last) {
    unsigned l = plan_line_source(line, len);
    if (!l && plan_remark(line, len)) l = *last;
    return *last = l;
}

static const char *page_style =
    "body{font:13px/1.35 ui-monospace,Menlo,Consolas,monospace;margin:0;color:#222;display:flex;"
    "flex-direction:column;height:100vh}"
    "header{padding:6px 12px;background:#f4f4f4;border-bottom:1px solid #ccc;flex:none;max-height:46vh;overflow:auto}"
    "h1{font-size:15px;margin:0 0 4px}h2{font-size:13px;margin:6px 0 4px}"
    ".cols{display:flex;flex:1;min-height:200px;overflow-x:auto}"
    ".col{flex:1 1 0;overflow:auto;border-right:1px solid #ccc;min-width:22em;position:relative}.col.src{flex:0.8 1 0}"
    ".col h2{position:sticky;top:0;background:#fff;padding:4px 8px;margin:0;border-bottom:1px solid #ddd;z-index:1}"
    "pre{margin:0;padding:4px 8px}pre span{display:block;white-space:pre}"
    "[data-l]:not([data-l=\"0\"]){background:hsl(var(--h) 70% 95%);cursor:pointer}"
    ".hi{outline:1px solid #333;background:hsl(var(--h) 85% 80%)!important}"
    "table{border-collapse:collapse;font-size:12px}td,th{padding:1px 6px;text-align:right;vertical-align:top;white-space:nowrap}"
    "td.s,td.n{text-align:left}td.n{font-size:11px;color:#444}"
    ".cut{max-width:36em;overflow:hidden;text-overflow:ellipsis}td.n .cut{max-width:70em}"
    "caption{text-align:left;font-size:11px;color:#555;padding-left:4px}"
    ".row{display:flex;gap:12px;align-items:flex-start;flex-wrap:wrap}"
    ".tally{max-height:190px;overflow:auto;margin-top:6px;background:#fff;border:1px solid #ddd}"
    ".contract{max-height:150px;overflow:auto;background:#fff;border:1px solid #ddd;max-width:60em}"
    ".res{background:#fff;border:1px solid #ddd;padding:2px 6px;max-height:150px;overflow:auto}"
    ".res td{text-align:left}.bar{width:140px;height:9px;background:#e6e6e6;display:inline-block}"
    ".bar i{display:block;height:9px;background:#7a9}.lim .bar i{background:#c54}.lim{font-weight:bold}"
    ".spill{color:#b00;font-weight:bold}"
    ".tc{font-weight:bold;color:#a00}.mem{color:#05a}.sync{color:#a50}.ctl{color:#707}"
    ".changed{box-shadow:inset 4px 0 #d33;font-weight:bold}";

/* Hover lights a source line's pieces everywhere; a click also scrolls each
 * column to the first of them (each column by itself: scrollIntoView would
 * also scroll the row of columns sideways). */
static const char *page_script =
    "let lit=[];function light(l,scroll){lit.forEach(e=>e.classList.remove('hi'));"
    "lit=l==='0'?[]:[...document.querySelectorAll('[data-l=\"'+l+'\"]')];lit.forEach(e=>e.classList.add('hi'));"
    "if(scroll)document.querySelectorAll('.col').forEach(c=>{const f=c.querySelector('[data-l=\"'+l+'\"]');"
    "if(f)c.scrollTop=f.offsetTop-c.clientHeight/2;});}"
    "document.querySelectorAll('[data-l]').forEach(e=>{e.addEventListener('mouseenter',()=>light(e.dataset.l,false));"
    "e.addEventListener('click',()=>light(e.dataset.l,true));});";

typedef unsigned Tally[KIND_COUNT];

/* Each source line's PTX instructions, by kind (line 0: the prologue). */
static Tally *tally_of(const char *ptx, unsigned nlines) {
    Tally *tally = calloc(nlines + 1, sizeof *tally);
    unsigned current = 0;
    const char *at = ptx, *line;
    size_t len;
    while (tally && next_ptx_line(&at, nlines, &current, &line, &len)) line_instructions(line, len, tally[current]);
    return tally;
}

/* Each source line's SASS instructions, by kind (line 0: none known). */
static Tally *sass_tally_of(const char *sass, unsigned nlines) {
    Tally *tally = calloc(nlines + 1, sizeof *tally);
    unsigned current = 0;
    const char *at = sass, *line, *text;
    size_t len, op_len;
    while (tally && next_sass_line(&at, nlines, &current, &line, &len)) {
        const char *op = sass_opcode(line, len, &op_len, &text);
        if (op) tally[current][sass_kind(op, op_len)]++;
    }
    return tally;
}

static unsigned tally_total(const Tally t) {
    unsigned total = 0;
    for (int k = 0; k < KIND_COUNT; k++) total += t[k];
    return total;
}

/* The plans' lines, in order, as one array (for the diff of two builds). */
typedef struct {
    const char **line;
    size_t *len;
    int n;
} Lines;

static Lines lines_of(const ExploreBuild *b) {
    Lines l = {0};
    int cap = 0;
    for (int i = 0; i < b->nplans; i++) {
        const char *at = b->plans[i] ? b->plans[i] : "", *line;
        size_t len;
        while (next_line(&at, &line, &len)) {
            if (l.n == cap) {
                cap = cap ? 2 * cap : 256;
                const char **nl = realloc(l.line, (size_t)cap * sizeof *nl);
                size_t *nlen = nl ? realloc(l.len, (size_t)cap * sizeof *nlen) : NULL;
                if (nl) l.line = nl;
                if (!nl || !nlen) return l;
                l.len = nlen;
            }
            l.line[l.n] = line, l.len[l.n++] = len;
        }
    }
    return l;
}

static bool same_line(const Lines *a, int i, const Lines *b, int j) {
    return a->len[i] == b->len[j] && memcmp(a->line[i], b->line[j], a->len[i]) == 0;
}

/* Marks the lines of a and b that a longest common subsequence leaves out
 * (changed[0] for a's, changed[1] for b's); false when the plans are too long
 * to compare (then nothing is marked). */
enum { MAX_DIFF_LINES = 4000 }; /* 32 MB of table at most */
static bool diff_lines(const Lines *a, const Lines *b, char *changed[2]) {
    if (a->n > MAX_DIFF_LINES || b->n > MAX_DIFF_LINES) return false;
    size_t w = (size_t)b->n + 1;
    unsigned short *lcs = calloc(((size_t)a->n + 1) * w, sizeof *lcs);
    if (!lcs) return false;
    for (int i = a->n - 1; i >= 0; i--)
        for (int j = b->n - 1; j >= 0; j--) {
            unsigned short down = lcs[(size_t)(i + 1) * w + (size_t)j], right = lcs[(size_t)i * w + (size_t)j + 1];
            lcs[(size_t)i * w + (size_t)j] = same_line(a, i, b, j) ? lcs[(size_t)(i + 1) * w + (size_t)j + 1] + 1
                                                                    : down > right ? down : right;
        }
    int i = 0, j = 0;
    while (i < a->n && j < b->n) {
        if (same_line(a, i, b, j)) i++, j++;
        else if (lcs[(size_t)(i + 1) * w + (size_t)j] >= lcs[(size_t)i * w + (size_t)j + 1]) changed[0][i++] = 1;
        else changed[1][j++] = 1;
    }
    while (i < a->n) changed[0][i++] = 1;
    while (j < b->n) changed[1][j++] = 1;
    free(lcs);
    return true;
}

/* A table's cell of a source line's text, cut to the cell's width. */
static void put_source_cell(FILE *out, const Source *src, unsigned l) {
    int len;
    const char *s = source_line_text(src, l, &len);
    fputs("<td class=\"s\"><div class=\"cut\">", out);
    if (s) put_escaped(out, s, (size_t)len);
    fputs("</div></td>", out);
}

/* The plan's notes on each source line (malloc'ed texts, one line a note;
 * NULL for none): the decisions printed after each kernel's block IR (a
 * load's width and what limits it, a dot's path and what refused a faster
 * one, a loop's stages), their remarks, and the shared-memory map's entries. */
static char **notes_of(const ExploreBuild *b, unsigned nlines) {
    char **notes = calloc(nlines + 1, sizeof *notes);
    for (int i = 0; notes && i < b->nplans; i++) {
        bool in_ir = false; /* the block IR between "kernel @name(...) {" and "}" is the plan column's, not notes */
        unsigned last = 0;
        const char *at = b->plans[i] ? b->plans[i] : "", *line;
        size_t len;
        while (next_line(&at, &line, &len)) {
            if (len > 8 && memcmp(line, "kernel @", 8) == 0) in_ir = true;
            if (in_ir) {
                in_ir = !(len == 1 && line[0] == '}');
                continue;
            }
            unsigned l = plan_line_of(line, len, &last);
            if (!l || l > nlines) continue;
            while (len && line[0] == ' ') line++, len--;
            size_t had = notes[l] ? strlen(notes[l]) : 0;
            char *grown = realloc(notes[l], had + len + 2);
            if (!grown) continue;
            if (had) grown[had++] = '\n';
            memcpy(grown + had, line, len);
            grown[had + len] = 0;
            notes[l] = grown;
        }
    }
    return notes;
}

static void free_notes(char **notes, unsigned nlines) {
    for (unsigned l = 0; notes && l <= nlines; l++) free(notes[l]);
    free(notes);
}

/* Each kernel's resources as bars: what a program takes of a
 * multiprocessor's programs, warps, registers and shared memory times the
 * programs that fit, the one that limits them marked; spills in red. ptxas
 * gives the registers; the launch contract the warps and shared memory. */
static void put_resources(FILE *out, const ExploreBuild *b) {
    char arch_name[32];
    const NvptxArch *arch = launch_contract_arch(b->ptx, arch_name, sizeof arch_name) ? nvptx_arch(arch_name) : NULL;
    if (!arch || !b->nresources) return;
    fputs("<div class=\"res\"><table>", out);
    for (int i = 0; i < b->nresources; i++) {
        const KernelResources *r = &b->resources[i];
        int warps;
        long long shared;
        if (!launch_contract_kernel(b->ptx, r->kernel, &warps, &shared) || warps < 1) continue;
        NvptxSmShare share[NVPTX_SM_RESOURCES];
        int limit = nvptx_sm_shares(arch, warps, r->registers, shared, share);
        int programs = share[limit].allows;
        fputs("<tr><th colspan=\"3\" style=\"text-align:left\">", out);
        put_escaped(out, r->kernel, strlen(r->kernel));
        fprintf(out, ": %d program%s an SM on %s (limit: %s)</th></tr>\n", programs, programs == 1 ? "" : "s",
                arch->name, share[limit].what);
        for (int s = 0; s < NVPTX_SM_RESOURCES; s++) { /* (one program's share where none fits) */
            long long used = (long long)share[s].used * (programs > 0 ? programs : 1);
            double percent = share[s].total ? 100.0 * (double)used / (double)share[s].total : 0;
            fprintf(out, "<tr%s><td>%s</td><td><span class=\"bar\"><i style=\"width:%.0f%%\"></i></span></td>"
                         "<td>%lld of %lld; room for %d</td></tr>\n",
                    s == limit ? " class=\"lim\"" : "", share[s].what, percent > 100 ? 100 : percent, used,
                    (long long)share[s].total, share[s].allows);
        }
        fprintf(out, "<tr><td>a thread</td><td colspan=\"2\">%d registers%s", r->registers,
                r->spill_stores || r->spill_loads ? ", <span class=\"spill\">" : ", no spills");
        if (r->spill_stores || r->spill_loads)
            fprintf(out, "%d bytes spilled, %d loaded back</span>", r->spill_stores, r->spill_loads);
        fprintf(out, "; %d bytes stack</td></tr>\n", r->stack);
    }
    fputs("</table></div>\n", out);
}

static void put_header_blocks(FILE *out, const ExploreBuild *b) {
    if (b->label) {
        fputs("<h2>", out);
        put_escaped(out, b->label, strlen(b->label));
        fputs("</h2>", out);
    }
    fputs("<div class=\"row\"><div class=\"contract\"><pre>", out); /* the launch contract: the PTX's leading comments */
    const char *at = b->ptx, *line;
    size_t len;
    while (next_line(&at, &line, &len) && len >= 2 && line[0] == '/' && line[1] == '/') {
        put_escaped(out, line, len);
        fputc('\n', out);
    }
    fputs("</pre></div>\n", out);
    put_resources(out, b);
    if (b->stats || !b->nresources || !b->sass) { /* ptxas's text, or what a missing tool leaves out */
        fputs("<div class=\"contract\"><pre>", out);
        if (b->stats) put_escaped(out, b->stats, strlen(b->stats));
        else if (!b->nresources)
            fputs("registers, spills and programs an SM: this page shows them where ptxas is installed\n"
                  "($BLKC_PTXAS, on the PATH or in /usr/local/cuda/bin)\n", out);
        if (!b->sass) fputs("SASS: this page shows it where ptxas and nvdisasm (or cuobjdump) are installed\n"
                             "($BLKC_NVDISASM, on the PATH or in /usr/local/cuda/bin)", out);
        fputs("</pre></div>", out);
    }
    fputs("</div>\n", out);
}

/* One cell of the table: a count of one kind, PTX's and (with SASS) SASS's. */
static void put_count_cell(FILE *out, const char *cls, unsigned ptx, const unsigned *sass) {
    if (!ptx && (!sass || !*sass)) {
        fputs("<td></td>", out);
        return;
    }
    fprintf(out, "<td class=\"%s\">%u", cls, ptx);
    if (sass) fprintf(out, " / %u", *sass);
    fputs("</td>", out);
}

/* One build's table: each source line's instructions by kind (PTX / SASS)
 * and the plan's notes on it. */
static void put_tally(FILE *out, const Source *src, Tally *t, Tally *sass, char **notes, unsigned nlines) {
    fprintf(out, "<div class=\"tally\"><table><caption>each source line's instructions by kind%s, and the plan's "
                 "notes on it (hover a note for all of them)</caption><tr><th>line</th><th>PTX</th>%s",
            sass ? " (PTX / SASS)" : "", sass ? "<th>SASS</th>" : "");
    for (int k = 0; k < KIND_COUNT; k++) fprintf(out, "<th class=\"%s\">%s</th>", kind_classes[k], kind_names[k]);
    fputs("<th class=\"s\">source</th><th class=\"n\">the plan's notes</th></tr>\n", out);
    for (unsigned l = 0; l <= nlines; l++) {
        unsigned total = tally_total(t[l]), sass_total = sass ? tally_total(sass[l]) : 0;
        if (!total && !sass_total && !(notes && notes[l])) continue;
        if (l) fprintf(out, "<tr data-l=\"%u\" style=\"--h:%u\"><td>%u</td>", l, (l * 67u) % 360u, l);
        else fputs("<tr data-l=\"0\"><td>prologue</td>", out);
        fprintf(out, "<td>%u</td>", total);
        if (sass) fprintf(out, "<td>%u</td>", sass_total);
        for (int k = 0; k < KIND_COUNT; k++) put_count_cell(out, kind_classes[k], t[l][k], sass ? &sass[l][k] : NULL);
        put_source_cell(out, src, l);
        fputs("<td class=\"n\"", out);
        const char *n = notes ? notes[l] : NULL;
        if (n) { /* the first note, all of them on hover: a row stays one line */
            fputs(" title=\"", out);
            put_escaped(out, n, strlen(n));
            fputs("\"><div class=\"cut\">", out);
            const char *eol = strchr(n, '\n');
            put_escaped(out, n, eol ? (size_t)(eol - n) : strlen(n));
            unsigned more = 0;
            for (; eol; eol = strchr(eol + 1, '\n')) more++;
            if (more) fprintf(out, " <b>(+%u)</b>", more);
            fputs("</div>", out);
        } else {
            fputc('>', out);
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table></div>\n", out);
}

/* Two builds' tables in one: each source line whose instructions differ, A
 * -> B by kind (PTX's; SASS's totals where both builds have SASS). */
static void put_tally_diff(FILE *out, const Source *src, Tally *a, Tally *b, Tally *sa, Tally *sb, unsigned nlines) {
    bool sass = sa && sb;
    fprintf(out, "<div class=\"tally\"><table><tr><th>line</th><th>PTX A</th><th>PTX B</th><th>B - A</th>%s"
                 "<th class=\"s\">PTX by kind, A &rarr; B</th><th class=\"s\">source</th></tr>\n",
            sass ? "<th>SASS A</th><th>SASS B</th>" : "");
    for (unsigned l = 0; l <= nlines; l++) {
        unsigned ta = tally_total(a[l]), tb = tally_total(b[l]);
        if (memcmp(a[l], b[l], sizeof(Tally)) == 0 && (!sass || memcmp(sa[l], sb[l], sizeof(Tally)) == 0)) continue;
        if (l) fprintf(out, "<tr data-l=\"%u\" style=\"--h:%u\"><td>%u</td>", l, (l * 67u) % 360u, l);
        else fputs("<tr data-l=\"0\"><td>prologue</td>", out);
        fprintf(out, "<td>%u</td><td>%u</td><td>%+d</td>", ta, tb, (int)tb - (int)ta);
        if (sass) fprintf(out, "<td>%u</td><td>%u</td>", tally_total(sa[l]), tally_total(sb[l]));
        fputs("<td class=\"s\">", out);
        for (int k = 0; k < KIND_COUNT; k++)
            if (a[l][k] != b[l][k]) fprintf(out, "<span class=\"%s\">%s %u&rarr;%u</span> ", kind_classes[k],
                                            kind_names[k], a[l][k], b[l][k]);
        fputs("</td>", out);
        put_source_cell(out, src, l);
        fputs("</tr>\n", out);
    }
    fputs("</table></div>\n", out);
}

static void put_plan_column(FILE *out, const ExploreBuild *b, const char *title, const char *changed,
                            unsigned nlines) {
    fputs("<div class=\"col\"><h2>", out);
    put_escaped(out, title, strlen(title));
    fputs("</h2><pre>", out);
    int n = 0;
    for (int i = 0; i < b->nplans; i++) {
        unsigned last = 0;
        const char *at = b->plans[i] ? b->plans[i] : "", *line;
        size_t len;
        while (next_line(&at, &line, &len)) {
            unsigned l = plan_line_of(line, len, &last);
            put_line(out, changed && changed[n] ? "p changed" : "p", l <= nlines ? l : 0, line, len);
            n++;
        }
        if (i + 1 < b->nplans) fputs("<span>\n</span>", out);
    }
    fputs("</pre></div>\n", out);
}

static void put_ptx_column(FILE *out, const ExploreBuild *b, const char *title, unsigned nlines) {
    fputs("<div class=\"col\"><h2>", out);
    put_escaped(out, title, strlen(title));
    fputs("</h2><pre>", out);
    unsigned current = 0;
    const char *at = b->ptx, *line;
    size_t len;
    while (next_ptx_line(&at, nlines, &current, &line, &len)) { /* (.loc lines: the colour says them) */
        const char *t = line;
        while (*t == ' ' || *t == '\t') t++;
        if (strncmp(t, "// begin inline asm", 19) == 0 || strncmp(t, "// end inline asm", 17) == 0) continue;
        unsigned counts[KIND_COUNT] = {0};
        if (line_instructions(line, len, counts)) {
            char cls[16];
            snprintf(cls, sizeof cls, "i %s", kind_classes[line_kind(counts)]);
            put_line(out, cls, current, line, len);
        } else {
            put_line(out, "d", 0, line, len);
        }
    }
    fputs("</pre></div>\n", out);
}

/* The SASS: each instruction tied to the source line nvdisasm's last
 * //## File comment named (cuobjdump's: to none), the address kept, the
 * padding and cuobjdump's encodings left out. */
static void put_sass_column(FILE *out, const ExploreBuild *b, const char *title, unsigned nlines) {
    fputs("<div class=\"col\"><h2>", out);
    put_escaped(out, title, strlen(title));
    fprintf(out, " (%s)</h2><pre>", b->sass_tool ? b->sass_tool : "");
    unsigned current = 0;
    const char *at = b->sass, *line, *text;
    size_t len, op_len;
    while (next_sass_line(&at, nlines, &current, &line, &len)) { /* (//## File lines: the colour says them) */
        const char *t = line;
        while (t < line + len && (*t == ' ' || *t == '\t')) t++;
        if (t == line + len || strncmp(t, "/* 0x", 5) == 0) continue; /* blank, or an encoding */
        const char *op = sass_opcode(line, len, &op_len, &text);
        if (!op) {
            put_line(out, "d", 0, t, (size_t)(line + len - t));
            continue;
        }
        const char *end = text;
        for (const char *e = text; e < line + len && strncmp(e, "/* 0x", 5) != 0; e++)
            if (*e != ' ' && *e != '\t') end = e + 1;
        char cls[16];
        snprintf(cls, sizeof cls, "x %s", kind_classes[sass_kind(op, op_len)]); /* x: SASS, i: PTX */
        const char *address_end = strstr(t, "*/") + 2; /* sass_opcode found it: the padding after it goes */
        char row[4096];
        int n = snprintf(row, sizeof row, "%.*s  %.*s", (int)(address_end - t), t, (int)(end - text), text);
        put_line(out, cls, current, row, n < (int)sizeof row ? (size_t)n : sizeof row - 1);
    }
    fputs("</pre></div>\n", out);
}

bool explore_page(FILE *out, const Source *src, const ExploreBuild *a, const ExploreBuild *b) {
    unsigned nlines = 1;
    for (size_t i = 0; i < src->len; i++) nlines += src->text[i] == '\n';
    Tally *ta = tally_of(a->ptx, nlines), *tb = b ? tally_of(b->ptx, nlines) : NULL;
    /* SASS counted by line only where the disassembler said the lines (nvdisasm; not cuobjdump) */
    bool lines_a = a->sass && strstr(a->sass, "//## File "), lines_b = b && b->sass && strstr(b->sass, "//## File ");
    Tally *sa = lines_a ? sass_tally_of(a->sass, nlines) : NULL, *sb = lines_b ? sass_tally_of(b->sass, nlines) : NULL;
    char **notes = b ? NULL : notes_of(a, nlines);
    Lines la = {0}, lb = {0};
    char *changed[2] = {NULL, NULL};
    bool ok = ta && (!b || tb) && (!lines_a || sa) && (!lines_b || sb) && (b || notes);
    if (ok && b) {
        la = lines_of(a), lb = lines_of(b);
        changed[0] = calloc((size_t)la.n + 1, 1), changed[1] = calloc((size_t)lb.n + 1, 1);
        ok = changed[0] && changed[1];
        if (ok) diff_lines(&la, &lb, changed);
    }
    if (ok) {
        bool sass = a->sass || (b && b->sass);
        fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>blkc: ", out);
        put_escaped(out, src->name, strlen(src->name));
        fprintf(out, "</title>\n<style>%s</style></head><body>\n<header><h1>", page_style);
        put_escaped(out, src->name, strlen(src->name));
        fprintf(out, " &mdash; %s: source, %s line to line (hover or click a line%s)</h1>\n",
                b ? "two builds compared" : "one build", sass ? "plan, PTX and SASS" : "plan and PTX",
                b ? "; plan lines only one build has are marked" : "");
        put_header_blocks(out, a);
        if (b) put_header_blocks(out, b), put_tally_diff(out, src, ta, tb, sa, sb, nlines);
        else put_tally(out, src, ta, sa, notes, nlines);
        fputs("</header>\n<div class=\"cols\">\n<div class=\"col src\"><h2>source</h2><pre>", out);
        const char *at = src->text, *line;
        size_t len;
        for (unsigned l = 1; next_line(&at, &line, &len); l++) put_line(out, "s", l, line, len);
        fputs("</pre></div>\n", out);
        put_plan_column(out, a, b ? "plan A" : "plan (--emit=plan)", changed[0], nlines);
        if (b) put_plan_column(out, b, "plan B", changed[1], nlines);
        put_ptx_column(out, a, b ? "PTX A" : "PTX (the .loc lines give each instruction its source line)", nlines);
        if (b) put_ptx_column(out, b, "PTX B", nlines);
        if (a->sass) put_sass_column(out, a, b ? "SASS A" : "SASS", nlines);
        if (b && b->sass) put_sass_column(out, b, "SASS B", nlines);
        fprintf(out, "</div>\n<script>%s</script>\n</body></html>\n", page_script);
    }
    free(ta), free(tb), free(sa), free(sb), free(la.line), free(la.len), free(lb.line), free(lb.len);
    free(changed[0]), free(changed[1]);
    free_notes(notes, nlines);
    return ok && !ferror(out);
}

/* annotate.c: --annotate: the PTX with each source line as a comment above
 * the instructions it produced, from the .loc directives; LLVM's
 * "// begin inline asm" / "// end inline asm" markers around each inline
 * PTX instruction (a quarter of matmul's lines) are left out: comments only,
 * so the code is the plain build's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvptx.h"


char *nvptx_annotate(const char *ptx, const Source *src) {
    size_t cap = strlen(ptx) * 2 + 4096, at = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    uint32_t last = 0;
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);
        const char *t = p;
        while (*t == ' ' || *t == '\t') t++;
        unsigned file, line;
        if (strncmp(t, "// begin inline asm\n", 20) == 0 || strncmp(t, "// end inline asm\n", 18) == 0) {
            p += n;
            continue;
        }
        if (strncmp(t, ".loc", 4) == 0 && sscanf(t, ".loc %u %u", &file, &line) == 2) {
            /* a source line comment where the line changes; the .loc itself
             * goes. Line 0 (code of no line) keeps the current one. */
            if (line == 0) {
                p += n;
                continue;
            }
            int len = 0;
            const char *s = source_line_text(src, line, &len);
            if (line != last && s) {
                size_t need = (size_t)len + 64;
                if (at + need >= cap) {
                    char *grown = realloc(out, cap = (cap + need) * 2);
                    if (!grown) { free(out); return NULL; }
                    out = grown;
                }
                at += (size_t)snprintf(out + at, cap - at, "\t// %u: %.*s\n", line, len, s);
            }
            last = line;
        } else {
            if (at + n + 1 >= cap) {
                char *grown = realloc(out, cap = (cap + n) * 2);
                if (!grown) { free(out); return NULL; }
                out = grown;
            }
            memcpy(out + at, p, n);
            at += n;
        }
        p += n;
    }
    out[at] = 0;
    return out;
}

/* diag.c: clang-style diagnostics with the source line and a caret. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

/* How much of a long source line a diagnostic echoes: this many bytes before
 * the caret, and at most DIAG_LINE_WIDTH in all. */
enum { DIAG_CONTEXT_BEFORE = 60, DIAG_LINE_WIDTH = 160 };

static const char *severity_name(DiagSeverity s) {
    switch (s) {
    case DIAG_ERROR: return "error";
    case DIAG_WARNING: return "warning";
    case DIAG_NOTE: return "note";
    case DIAG_REMARK: return "remark";
    }
    return "error";
}

void diag_report(DiagEngine *de, DiagSeverity sev, const Source *src, Span span,
                 const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(de, sev, src, span, fmt, ap);
    va_end(ap);
}

void diag_vreport(DiagEngine *de, DiagSeverity sev, const Source *src, Span span,
                  const char *fmt, va_list ap) {
    if (de->capped) return;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    for (char *c = msg; *c; c++) /* a message may quote source text: keep it inert */
        if (((unsigned char)*c < 0x20 && *c != '\t' && *c != '\n') || *c == 0x7f) *c = '?';
    if (sev == DIAG_ERROR && de->errors >= DIAG_MAX_ERRORS) {
        /* Say once that we stop, then drop everything that follows. */
        de->capped = true;
        Diagnostic d = {DIAG_ERROR, src, span, "too many errors emitted, stopping now"};
        if (de->callback) de->callback(de->user, &d);
        return;
    }
    if (sev == DIAG_ERROR) de->errors++;
    Diagnostic d = {sev, src, span, msg};
    if (de->callback) de->callback(de->user, &d);
}

const char *source_line_text(const Source *src, uint32_t line, int *len) {
    if (!src || !src->text || line == 0) return NULL;
    const char *s = src->text, *end = src->text + src->len;
    for (uint32_t l = 1; l < line && s < end; s++) l += *s == '\n';
    if (s >= end) return NULL;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    const char *e = s;
    while (e < end && *e != '\n') e++;
    *len = (int)(e - s);
    return s;
}

Span span_join(Span a, Span b) {
    if (b.offset + b.len <= a.offset) return a;
    Span s = a;
    s.len = b.offset + b.len - a.offset;
    return s;
}

/* Growable string for diag_format. */
typedef struct {
    char *buf;
    size_t len, cap;
} StrBuf;

static void sb_put(StrBuf *sb, const char *s, size_t n) {
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 128;
        while (cap < sb->len + n + 1) cap *= 2;
        char *nb = realloc(sb->buf, cap);
        if (!nb) return;
        sb->buf = nb;
        sb->cap = cap;
    }
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = 0;
}

static void sb_puts(StrBuf *sb, const char *s) { sb_put(sb, s, strlen(s)); }

/* ANSI colours as clang draws them: the place bold, the severity in its
 * colour, the message bold, the caret green. */
static const char *severity_colour(DiagSeverity s) {
    switch (s) {
    case DIAG_ERROR: return "\033[1;31m";
    case DIAG_WARNING: return "\033[1;35m";
    case DIAG_NOTE: return "\033[1;36m";
    case DIAG_REMARK: return "\033[1;34m";
    }
    return "\033[1;31m";
}
#define BOLD(c) ((c) ? "\033[1m" : "")
#define RESET(c) ((c) ? "\033[0m" : "")

char *diag_format(const Diagnostic *d) { return diag_format_colour(d, false); }

char *diag_format_colour(const Diagnostic *d, bool colour) {
    StrBuf sb = {0};
    char head[512];
    const char *name = d->src ? d->src->name : "<input>";
    const char *sev = colour ? severity_colour(d->severity) : "";
    /* line 0: about the file as a whole (e.g. a -D that matches nothing) */
    if (d->span.line == 0)
        snprintf(head, sizeof head, "%s%s: %s%s:%s ", BOLD(colour), name, sev, severity_name(d->severity),
                 RESET(colour));
    else
        snprintf(head, sizeof head, "%s%s:%u:%u: %s%s:%s ", BOLD(colour), name, d->span.line, d->span.col, sev,
                 severity_name(d->severity), RESET(colour));
    sb_puts(&sb, head);
    sb_puts(&sb, BOLD(colour));
    sb_puts(&sb, d->message);
    sb_puts(&sb, RESET(colour));
    sb_puts(&sb, "\n");
    if (d->span.line > 0 && d->src && d->src->text && d->span.offset <= d->src->len) {
        /* The source line, tabs kept so the caret lines up under them. A long line
         * shows a window around the caret, and control bytes (terminal escapes,
         * NUL) show as '?', so the echo is bounded and inert. */
        const char *text = d->src->text;
        size_t start = d->span.offset;
        while (start > 0 && text[start - 1] != '\n') start--;
        size_t end = d->span.offset;
        while (end < d->src->len && text[end] != '\n' && text[end] != '\r') end++;
        bool cut_left = d->span.offset - start > DIAG_CONTEXT_BEFORE;
        if (cut_left) start = d->span.offset - DIAG_CONTEXT_BEFORE;
        bool cut_right = end - start > DIAG_LINE_WIDTH;
        if (cut_right) end = start + DIAG_LINE_WIDTH;
        const char *ellipsis = "...";
        if (cut_left) sb_puts(&sb, ellipsis);
        for (size_t i = start; i < end; i++) {
            unsigned char c = (unsigned char)text[i];
            sb_put(&sb, (c < 0x20 && c != '\t') || c == 0x7f ? "?" : (const char *)&text[i], 1);
        }
        if (cut_right) sb_puts(&sb, ellipsis);
        sb_puts(&sb, "\n");
        if (cut_left) sb_puts(&sb, "   ");
        for (size_t i = start; i < d->span.offset; i++) sb_put(&sb, text[i] == '\t' ? "\t" : " ", 1);
        if (colour) sb_puts(&sb, "\033[1;32m");
        sb_puts(&sb, "^");
        /* Underline the rest of the span, up to the end of what was shown. */
        size_t span_end = d->span.offset + d->span.len;
        if (span_end > end) span_end = end;
        for (size_t i = d->span.offset + 1; i < span_end; i++) sb_puts(&sb, "~");
        sb_puts(&sb, RESET(colour));
        sb_puts(&sb, "\n");
    }
    if (!sb.buf) return calloc(1, 1);
    return sb.buf;
}

void diag_print_to_file(void *file, const Diagnostic *d) {
    char *s = diag_format(d);
    fputs(s, (FILE *)file);
    free(s);
}

void diag_print_colour_to_file(void *file, const Diagnostic *d) {
    char *s = diag_format_colour(d, true);
    fputs(s, (FILE *)file);
    free(s);
}

/* Suites with one test per .blk file of a folder (tests/diagnostics,
 * tests/plan, tests/bir): the sorted files, the test's file by its index,
 * and the directive lines a file holds. Include
 * after criterion/parameterized.h, with _DEFAULT_SOURCE (scandir). */
#ifndef BLK_TEST_FILES_H
#define BLK_TEST_FILES_H
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int blk_file_filter(const struct dirent *d) {
    size_t n = strlen(d->d_name);
    return n > 4 && strcmp(d->d_name + n - 4, ".blk") == 0;
}

/* Criterion's parameters: the indexes 0 .. n-1 of dir's .blk files (each
 * test process lists them again). */
static inline struct criterion_test_params blk_file_params(const char *dir) {
    struct dirent **list;
    int n = scandir(dir, &list, blk_file_filter, alphasort);
    int *idx = cr_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        idx[i] = i;
        free(list[i]);
    }
    if (n >= 0) free(list);
    return cr_make_param_array(int, idx, (size_t)(n > 0 ? n : 0));
}

/* The name of dir's index-th .blk file into name; false if there is none. */
static inline bool blk_file_name(const char *dir, int index, char *name, size_t size) {
    struct dirent **list;
    int n = scandir(dir, &list, blk_file_filter, alphasort);
    if (n < 0) return false;
    if (index < n) snprintf(name, size, "%s", list[index]->d_name);
    for (int i = 0; i < n; i++) free(list[i]);
    free(list);
    return index < n;
}

/* The next `// NAME: TEXT` line of a test file from *at on (the
 * expectations and options tests/plan, tests/bir and tests/diagnostics keep
 * in their files): its TEXT in *text, *len bytes long; *at moves past it.
 * False when there is no more. */
static inline bool blk_directive(const char **at, const char *name, const char **text, int *len) {
    size_t n = strlen(name);
    for (const char *line = *at; *line;) {
        const char *end = strchr(line, '\n');
        size_t line_len = end ? (size_t)(end - line) : strlen(line);
        const char *next = end ? end + 1 : line + line_len;
        if (line_len > n + 5 && strncmp(line, "// ", 3) == 0 && strncmp(line + 3, name, n) == 0 &&
            strncmp(line + 3 + n, ": ", 2) == 0) {
            *text = line + n + 5;
            *len = (int)(line_len - n - 5);
            *at = next;
            return true;
        }
        line = next;
    }
    *at = *at + strlen(*at);
    return false;
}
#endif

/* fake_cuda.h: what tests/launcher/fake_cuda.c, a CUDA driver without a
 * GPU, records of the last launch. */
#ifndef BLK_FAKE_CUDA_H
#define BLK_FAKE_CUDA_H

#include <stddef.h>

enum { FAKE_MAX_PARAMS = 96, FAKE_SMS = 132, FAKE_BLOCKS_PER_SM = 2 };

typedef struct {
    char name[128];
    const char *ptx;   /* the PTX the launched function was loaded from (owned by its module) */
    unsigned grid[3], block[3], shared;
    int nparams;
    int param_bytes[FAKE_MAX_PARAMS];
    unsigned char params[4096]; /* every parameter's bytes, in order */
    size_t params_len;
    int after_previous; /* by cuLaunchKernelEx with programmatic stream serialization allowed */
} FakeLaunch;

/* The last launch, or NULL before the first; the number of launches so far. */
const FakeLaunch *fake_cuda_last_launch(void);
int fake_cuda_launches(void);

#endif

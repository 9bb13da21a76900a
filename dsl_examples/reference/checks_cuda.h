/* checks_cuda.h: raw driver access for the GPU benchmarks (see checks_cuda.c). */
#ifndef BLK_CHECKS_CUDA_H
#define BLK_CHECKS_CUDA_H

#include "checks.h"
#include "cuda_driver.h"

typedef struct {
    const char *examples_dir;
    NvptxOptions backend; /* arch is taken from the device */
    CudaDriver drv;
    CUdevice dev;
    CUcontext cu_ctx;
    char arch[16];
    char device_name[128];
} CudaLaunchCtx;

/* Loads the driver and opens device 0; false with the reason when there is
 * no driver or no device. */
bool cuda_launch_init(CudaLaunchCtx *c, char *err, size_t err_size);
void cuda_launch_close(CudaLaunchCtx *c);
typedef struct {
    CUmodule mod;
    CUfunction fn;
    int warps;        /* the block is 32 x warps threads */
    int64_t shared_bytes; /* dynamic shared memory to launch with */
    size_t ptx_bytes;
} LoadedKernel;

/* JIT an example's kernel (front end, PTX, driver load); NULL or an error. */
char *cuda_load_kernel(CudaLaunchCtx *c, const ExampleKernel *k, const int64_t *param_div, LoadedKernel *out);
char *cuda_load_compiled(CudaLaunchCtx *c, Compilation *comp, const BirFunction *fn, const int64_t *param_div,
                         LoadedKernel *out);
#endif

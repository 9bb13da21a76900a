/* cuda_driver.h: the CUDA Driver API, loaded with dlopen("libcuda.so.1") at
 * run time, so that blkc builds and runs on machines without a GPU driver.
 * Only cuda.h's types are used at build time. */
#ifndef BLK_CUDA_DRIVER_H
#define BLK_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>

typedef struct {
    void *lib;
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*DevicePrimaryCtxGetState)(CUdevice, unsigned *, int *);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
    CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*LinkCreate)(unsigned, CUjit_option *, void **, CUlinkState *);
    CUresult (*LinkAddData)(CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned, CUjit_option *, void **);
    CUresult (*LinkComplete)(CUlinkState, void **, size_t *);
    CUresult (*LinkDestroy)(CUlinkState);
    /* drivers from CUDA 12 on; NULL in older ones (then no TMA) */
    CUresult (*TensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                     const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    /* drivers from CUDA 12 on; NULL in older ones (then no programmatic dependent launch) */
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
} CudaDriver;

/* Loads libcuda.so.1 and every entry point. False, with the reason in err,
 * when there is no driver. */
bool blk_cuda_driver_load(CudaDriver *d, char *err, size_t err_size);
void blk_cuda_driver_unload(CudaDriver *d);
/* "CUDA error 700: an illegal memory access was encountered" */
const char *blk_cuda_error_text(const CudaDriver *d, CUresult r, char *buf, size_t size);

#endif

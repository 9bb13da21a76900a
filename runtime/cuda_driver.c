/* cuda_driver.c: see cuda_driver.h. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

bool blk_cuda_driver_load(CudaDriver *d, char *err, size_t err_size) {
    memset(d, 0, sizeof *d);
    d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d->lib) {
        snprintf(err, err_size, "no CUDA driver: cannot load libcuda.so.1 (%s)", dlerror());
        return false;
    }
    /* the versioned names are the ones cuda.h's macros select */
    struct { void **slot; const char *name; } syms[] = {
        {(void **)&d->Init, "cuInit"},
        {(void **)&d->DriverGetVersion, "cuDriverGetVersion"},
        {(void **)&d->DeviceGetCount, "cuDeviceGetCount"},
        {(void **)&d->DeviceGet, "cuDeviceGet"},
        {(void **)&d->DeviceGetName, "cuDeviceGetName"},
        {(void **)&d->DeviceGetAttribute, "cuDeviceGetAttribute"},
        {(void **)&d->DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
        {(void **)&d->DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
        {(void **)&d->DevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState"},
        {(void **)&d->CtxSetCurrent, "cuCtxSetCurrent"},
        {(void **)&d->CtxSynchronize, "cuCtxSynchronize"},
        {(void **)&d->ModuleUnload, "cuModuleUnload"},
        {(void **)&d->ModuleGetFunction, "cuModuleGetFunction"},
        {(void **)&d->FuncSetAttribute, "cuFuncSetAttribute"},
        {(void **)&d->FuncGetAttribute, "cuFuncGetAttribute"},
        {(void **)&d->OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"},
        {(void **)&d->MemAlloc, "cuMemAlloc_v2"},
        {(void **)&d->MemFree, "cuMemFree_v2"},
        {(void **)&d->MemcpyHtoD, "cuMemcpyHtoD_v2"},
        {(void **)&d->MemcpyDtoH, "cuMemcpyDtoH_v2"},
        {(void **)&d->MemsetD8, "cuMemsetD8_v2"},
        {(void **)&d->LaunchKernel, "cuLaunchKernel"},
        {(void **)&d->EventCreate, "cuEventCreate"},
        {(void **)&d->EventRecord, "cuEventRecord"},
        {(void **)&d->EventSynchronize, "cuEventSynchronize"},
        {(void **)&d->EventElapsedTime, "cuEventElapsedTime_v2"},
        {(void **)&d->EventDestroy, "cuEventDestroy_v2"},
        {(void **)&d->GetErrorString, "cuGetErrorString"},
        {(void **)&d->ModuleLoadData, "cuModuleLoadData"},
        {(void **)&d->LinkCreate, "cuLinkCreate_v2"},
        {(void **)&d->LinkAddData, "cuLinkAddData_v2"},
        {(void **)&d->LinkComplete, "cuLinkComplete"},
        {(void **)&d->LinkDestroy, "cuLinkDestroy"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(d->lib, syms[i].name);
        if (!p && strcmp(syms[i].name, "cuEventElapsedTime_v2") == 0) p = dlsym(d->lib, "cuEventElapsedTime");
        if (!p) {
            snprintf(err, err_size, "the CUDA driver lacks %s", syms[i].name);
            dlclose(d->lib);
            d->lib = NULL;
            return false;
        }
        memcpy(syms[i].slot, &p, sizeof p);
    }
    void *p = dlsym(d->lib, "cuTensorMapEncodeTiled");
    memcpy(&d->TensorMapEncodeTiled, &p, sizeof p);
    p = dlsym(d->lib, "cuLaunchKernelEx");
    memcpy(&d->LaunchKernelEx, &p, sizeof p);
    return true;
}

void blk_cuda_driver_unload(CudaDriver *d) {
    if (d->lib) dlclose(d->lib);
    d->lib = NULL;
}

const char *blk_cuda_error_text(const CudaDriver *d, CUresult r, char *buf, size_t size) {
    const char *s = NULL;
    if (d->GetErrorString) d->GetErrorString(r, &s);
    snprintf(buf, size, "CUDA error %d: %s", (int)r, s ? s : "unknown");
    return buf;
}

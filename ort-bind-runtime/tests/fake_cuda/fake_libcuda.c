/*
 * A stand-in for the NVIDIA driver library (libcuda.so), for tests on machines without a
 * GPU. It implements the driver entry points ort-bind reaches through cudarc, over host
 * memory: "device" allocations are malloc'd blocks tagged with a device ordinal, every
 * asynchronous call completes before it returns, streams and events are plain handles.
 *
 * It checks ort-bind's own code (allocation, copies, hand-over, adoption, error mapping,
 * out-of-memory, wrong-device checks) against the driver API's contracts. It says nothing
 * about real GPUs, real streams or ONNX Runtime's CUDA execution provider; those are
 * covered by tests/cuda.rs on a machine with a GPU.
 *
 * Knobs (environment, read at cuInit): FAKE_CUDA_DEVICES (default 2),
 * FAKE_CUDA_MAX_ALLOC (bytes per allocation before CUDA_ERROR_OUT_OF_MEMORY,
 * default 1 GiB). fake_cuda_copies() counts bytes copied host<->device and device<->device.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx *CUcontext;
typedef struct fake_stream *CUstream;
typedef struct fake_event *CUevent;

enum {
    SUCCESS = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    INVALID_CONTEXT = 201,
    INVALID_HANDLE = 400,
};

struct fake_ctx { int ordinal; int refs; };
struct fake_stream { int magic; };
struct fake_event { int magic; };

#define MAX_DEVICES 8
#define MAX_ALLOCS 4096
#define MAGIC 0x5ca1ab1e

static struct fake_ctx contexts[MAX_DEVICES];
static int initialised;
static int device_count = 2;
static unsigned long long max_alloc = 1ULL << 30;
static __thread CUcontext current;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct alloc { uintptr_t ptr; size_t size; int ordinal; int host; };
static struct alloc allocs[MAX_ALLOCS];
static unsigned long long copied[3]; /* htod, dtoh, dtod bytes */

static int find(uintptr_t p) {
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].ptr && p >= allocs[i].ptr && p < allocs[i].ptr + (allocs[i].size ? allocs[i].size : 1))
            return i;
    return -1;
}

static CUresult track(void *p, size_t size, int ordinal, int host) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (!allocs[i].ptr) {
            allocs[i] = (struct alloc){(uintptr_t)p, size, ordinal, host};
            pthread_mutex_unlock(&lock);
            return SUCCESS;
        }
    }
    pthread_mutex_unlock(&lock);
    free(p);
    return OUT_OF_MEMORY;
}

static CUresult untrack(uintptr_t p, int host) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (allocs[i].ptr == p && allocs[i].host == host) {
            allocs[i].ptr = 0;
            pthread_mutex_unlock(&lock);
            free((void *)p);
            return SUCCESS;
        }
    }
    pthread_mutex_unlock(&lock);
    return INVALID_VALUE;
}

/* A device range [p, p+n) that the fake allocated, or an error. Like the real driver,
 * memory calls need a current context on the calling thread. */
static CUresult device_range(CUdeviceptr p, size_t n) {
    if (!current) return INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    int i = find((uintptr_t)p);
    int ok = i >= 0 && !allocs[i].host && (uintptr_t)p + n <= allocs[i].ptr + allocs[i].size;
    pthread_mutex_unlock(&lock);
    return ok ? SUCCESS : INVALID_VALUE;
}

unsigned long long fake_cuda_copies(int kind) { return kind >= 0 && kind < 3 ? copied[kind] : 0; }
int fake_cuda_live_allocations(void) {
    int n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS; i++) n += allocs[i].ptr != 0;
    pthread_mutex_unlock(&lock);
    return n;
}

CUresult cuInit(unsigned flags) {
    (void)flags;
    const char *d = getenv("FAKE_CUDA_DEVICES");
    const char *m = getenv("FAKE_CUDA_MAX_ALLOC");
    if (d) device_count = atoi(d);
    if (device_count > MAX_DEVICES) device_count = MAX_DEVICES;
    if (m) max_alloc = strtoull(m, NULL, 10);
    for (int i = 0; i < MAX_DEVICES; i++) contexts[i].ordinal = i;
    initialised = 1;
    return device_count > 0 ? SUCCESS : NO_DEVICE;
}

CUresult cuGetErrorName(CUresult e, const char **s) {
    switch (e) {
    case SUCCESS: *s = "CUDA_SUCCESS"; break;
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
    case INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; break;
    }
    return SUCCESS;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
    switch (e) {
    case INVALID_CONTEXT: *s = "invalid device context (fake driver)"; break;
    case OUT_OF_MEMORY: *s = "out of memory (fake driver)"; break;
    case INVALID_VALUE: *s = "invalid argument (fake driver)"; break;
    case INVALID_DEVICE: *s = "invalid device ordinal (fake driver)"; break;
    default: return cuGetErrorName(e, s);
    }
    return SUCCESS;
}

CUresult cuDeviceGetCount(int *n) {
    if (!initialised) return NOT_INITIALIZED;
    *n = device_count;
    return SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    if (!initialised) return NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= device_count) return INVALID_DEVICE;
    *d = ordinal;
    return SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, int attribute, CUdevice d) {
    (void)attribute;
    if (d < 0 || d >= device_count) return INVALID_DEVICE;
    *v = 1; /* memory pools supported, and anything else asked */
    return SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    if (d < 0 || d >= device_count) return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    contexts[d].refs++;
    pthread_mutex_unlock(&lock);
    *c = &contexts[d];
    return SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    if (d < 0 || d >= device_count) return INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    contexts[d].refs--;
    pthread_mutex_unlock(&lock);
    return SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *c) { *c = current; return SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { current = c; return SUCCESS; }
CUresult cuCtxSynchronize(void) { return current ? SUCCESS : INVALID_CONTEXT; }

CUresult cuStreamCreate(CUstream *s, unsigned flags) {
    (void)flags;
    if (!current) return INVALID_CONTEXT;
    struct fake_stream *st = malloc(sizeof *st);
    if (!st) return OUT_OF_MEMORY;
    st->magic = MAGIC;
    *s = st;
    return SUCCESS;
}

static CUresult check_stream(CUstream s) {
    /* 0 (legacy default) and 2 (per-thread) are valid special handles */
    if ((uintptr_t)s == 0 || (uintptr_t)s == 2) return SUCCESS;
    return s->magic == MAGIC ? SUCCESS : INVALID_HANDLE;
}

CUresult cuStreamDestroy_v2(CUstream s) {
    if (check_stream(s) || (uintptr_t)s <= 2) return INVALID_HANDLE;
    s->magic = 0;
    free(s);
    return SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s) { return check_stream(s); }

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
    (void)flags;
    if (check_stream(s)) return INVALID_HANDLE;
    return e && e->magic == MAGIC ? SUCCESS : INVALID_HANDLE;
}

CUresult cuEventCreate(CUevent *e, unsigned flags) {
    (void)flags;
    struct fake_event *ev = malloc(sizeof *ev);
    if (!ev) return OUT_OF_MEMORY;
    ev->magic = MAGIC;
    *e = ev;
    return SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream s) {
    if (!e || e->magic != MAGIC) return INVALID_HANDLE;
    return check_stream(s);
}

CUresult cuEventSynchronize(CUevent e) { return e && e->magic == MAGIC ? SUCCESS : INVALID_HANDLE; }
CUresult cuEventQuery(CUevent e) { return cuEventSynchronize(e); }

CUresult cuEventDestroy_v2(CUevent e) {
    if (!e || e->magic != MAGIC) return INVALID_HANDLE;
    e->magic = 0;
    free(e);
    return SUCCESS;
}

static CUresult device_alloc(CUdeviceptr *p, size_t size) {
    if (!current) return INVALID_CONTEXT;
    if (size == 0) return INVALID_VALUE;
    if (size > max_alloc) return OUT_OF_MEMORY;
    void *m = calloc(1, size);
    if (!m) return OUT_OF_MEMORY;
    CUresult r = track(m, size, current->ordinal, 0);
    if (r == SUCCESS) *p = (CUdeviceptr)(uintptr_t)m;
    return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size) { return device_alloc(p, size); }

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream s) {
    if (check_stream(s)) return INVALID_HANDLE;
    return device_alloc(p, size);
}

CUresult cuMemFree_v2(CUdeviceptr p) {
    if (!current) return INVALID_CONTEXT;
    return untrack((uintptr_t)p, 0);
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
    if (!current) return INVALID_CONTEXT;
    if (check_stream(s)) return INVALID_HANDLE;
    return untrack((uintptr_t)p, 0);
}

CUresult cuMemHostAlloc(void **p, size_t size, unsigned flags) {
    (void)flags;
    if (!current) return INVALID_CONTEXT;
    if (size == 0) return INVALID_VALUE;
    if (size > max_alloc) return OUT_OF_MEMORY;
    void *m = calloc(1, size);
    if (!m) return OUT_OF_MEMORY;
    CUresult r = track(m, size, current->ordinal, 1);
    if (r == SUCCESS) *p = m;
    return r;
}

CUresult cuMemFreeHost(void *p) { return untrack((uintptr_t)p, 1); }

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
    if (check_stream(s)) return INVALID_HANDLE;
    CUresult r = device_range(dst, n);
    if (r) return r;
    memcpy((void *)(uintptr_t)dst, src, n);
    copied[0] += n;
    return SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
    if (check_stream(s)) return INVALID_HANDLE;
    CUresult r = device_range(src, n);
    if (r) return r;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    copied[1] += n;
    return SUCCESS;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    if (check_stream(s)) return INVALID_HANDLE;
    CUresult r = device_range(dst, n);
    if (r || (r = device_range(src, n))) return r;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    copied[2] += n;
    return SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
    if (check_stream(s)) return INVALID_HANDLE;
    CUresult r = device_range(p, n);
    if (r) return r;
    memset((void *)(uintptr_t)p, v, n);
    return SUCCESS;
}

/* CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2 (HOST = 1, DEVICE = 2), DEVICE_ORDINAL = 9 */
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p) {
    pthread_mutex_lock(&lock);
    int i = find((uintptr_t)p);
    struct alloc a = i >= 0 ? allocs[i] : (struct alloc){0};
    pthread_mutex_unlock(&lock);
    if (i < 0) return INVALID_VALUE;
    if (attribute == 2) *(unsigned *)data = a.host ? 1 : 2;
    else if (attribute == 9) *(int *)data = a.ordinal;
    else return INVALID_VALUE;
    return SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    *free_bytes = max_alloc;
    *total = max_alloc;
    return SUCCESS;
}

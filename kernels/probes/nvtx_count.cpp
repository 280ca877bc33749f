/* An NVTX injection library that counts range pushes by name and prints them at exit: shows,
 * on a GPU machine without Nsight Systems, that tidal's ranges ([telemetry] ranges = true) reach
 * a tool. Run a program with NVTX_INJECTION64_PATH=build/kernels/probes/libnvtx-count.so.
 * Built with the nvcc kernels (it needs the toolkit's NVTX headers, nothing else). */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

static struct { char name[64]; long count; } seen[64];
static int kinds;
static long pops;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int push(const char *message) // the callback's signature is nvtxRangePushA's
{
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < kinds && strcmp(seen[i].name, message) != 0)
        ++i;
    if (i == kinds && kinds < 64)
        snprintf(seen[kinds++].name, sizeof seen[0].name, "%s", message);
    if (i < 64)
        ++seen[i].count;
    pthread_mutex_unlock(&lock);
    return 0;
}
static int pop(void) { __atomic_add_fetch(&pops, 1, __ATOMIC_RELAXED); return 0; }
static void report(void)
{
    fprintf(stderr, "nvtx-count: %ld pops\n", pops);
    for (int i = 0; i < kinds; ++i)
        fprintf(stderr, "nvtx-count: push \"%s\" x %ld\n", seen[i].name, seen[i].count);
}

extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = 0;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || size <= NVTX_CBID_CORE_RangePop)
        return 0;
    *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push;
    *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
    atexit(report);
    return 1;
}

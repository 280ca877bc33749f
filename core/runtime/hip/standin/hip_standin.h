/*
 * The HIP stand-in's own interface: what a test reads and sets through dlsym on
 * libamdhip64.so.5 once the loader has picked the stand-in up (it never links it, so the same
 * test binary also runs, and skips, where the stand-in was not built). Plain C, no HIP types.
 *
 * Environment, read at each call that depends on it (so a test may change it between
 * contexts):
 *   HIP_STANDIN_XNACK    1 (default): gcnArchName "gfx90a:sramecc+:xnack+",
 *                        pageableMemoryAccess 1, unknown host pointers prefetchable;
 *                        0: "gfx90a:sramecc+:xnack-", pageableMemoryAccess 0, and
 *                        hipMemPrefetchAsync on a pointer HIP does not know fails
 *                        hipErrorNotSupported.
 *   HIP_STANDIN_DEVICES  device count, 1 (default) to 8; 0 = hipErrorNoDevice.
 *   HIP_STANDIN_VMM      0: the virtual-memory functions answer hipErrorNotSupported.
 *   HIP_STANDIN_KERNELS  "noop": launches succeed and do nothing; otherwise (default) a launch
 *                        fails hipErrorInvalidDeviceFunction, as on a GPU the build has no code
 *                        object for (the stand-in runs no device code).
 *   HIP_STANDIN_TRACE    a file each recorded call is appended to, one line each.
 */
#ifndef TIDAL_TESTS_HIP_STANDIN_H
#define TIDAL_TESTS_HIP_STANDIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One recorded HIP call. Which argument lands in which field depends on the function; the
 * stand-in's source says it next to each function (e.g. hipMemAdvise: ptr, size,
 * arg = the advice number as received, device = the device argument). */
typedef struct hip_standin_call {
    char function[48];
    const void *ptr;
    uint64_t size;
    int64_t arg;
    int64_t device;
    int result; /* the hipError_t returned */
} hip_standin_call;

size_t hip_standin_call_count(void);
/* Copies call `index` (0 = the oldest since the last reset); 0 on success, -1 past the end. */
int hip_standin_call_get(size_t index, hip_standin_call *out);

/* Forgets recorded calls, violations and pending injections (not allocations). */
void hip_standin_reset(void);

/* The calls of `function` after the next `skip` ones fail with `error`, `times` of them
 * (0 = every one from then on), without doing anything. */
void hip_standin_inject(const char *function, int error, unsigned skip, unsigned times);

/* Breaches of what the HIP documentation requires that the stand-in saw (a managed range
 * freed while it still carried coarse-grain advice, an unknown advice number, a handle used
 * after it was destroyed, a pointer freed by the wrong function or twice, ...): returns how
 * many, and writes them one per line into `text` (may be NULL). */
size_t hip_standin_violations(char *text, size_t capacity);

/* What is alive now (allocations, registrations, streams, events, VMM reservations and
 * handles): returns how many, and describes them one per line into `text` (may be NULL). */
size_t hip_standin_live(char *text, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* TIDAL_TESTS_HIP_STANDIN_H */

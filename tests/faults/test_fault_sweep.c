/* The fault sweep: one representative workload (every allocation kind, elastic memory where the
 * simulated device has a virtual-memory group, frees, copies both ways
 * with staged pageable copies, copies between devices (over the peer link and staged), copy_batch,
 * declarations under a budget, prefetch, advice,
 * registration, kernels, range and device queries, the clock, streams with async alloc/free
 * that are forgotten, used again and destroyed, a statistics snapshot, pool trim), run once clean to count each
 * fault-injectable runtime operation's calls, then once per (operation, call) with that one
 * call failing. Every operation the simulated device can fail is swept (the names come from
 * its call-count file, so a new one is swept without touching this test). Every failure must
 * come back as a status with a message (never INTERNAL); the context must keep working
 * afterwards (a clean alloc/copy/free, pools back to zero in use and, after a trim that the
 * runtime lets through, to zero reserved: memory freed on destroyed streams came back), and
 * destroying it must succeed; in the ASan build LeakSanitizer checks every case. A fault
 * during context creation ("create", and the device queries creation makes) must make
 * creation fail with a status and a message.
 *
 * Calls swept per operation: every one of the first kAllCalls (64), then every kStride-th (4th)
 * and the last, so a workload that grows to call something hundreds of times (event queries
 * while migrations and pools poll) costs tens of cases more, not hundreds. The workload now
 * calls nothing more than 40 times, so every call is swept (277 cases since copies between
 * devices joined it; 2.5 minutes on the shared build machine under load).
 *
 * Each case runs in a forked child with a fresh context, so a crash or a leak names its case.
 * The simulated device tells the call counts through TIDAL_SIM_CALL_COUNTS (a test hook).
 * TIDAL_TEST_FAULT_OPS=alloc,free limits the sweep to some operations (for debugging);
 * TIDAL_TEST_FAULT_ALL=1 sweeps every call. */
#define _POSIX_C_SOURCE 200809L

#include "../capi/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_OPERATIONS 64
enum { kAllCalls = 64, kStride = 4 };

#define KIB ((size_t)1024)
#define MIB (1024 * KIB)

/* What the workload saw. */
struct outcome {
    int failed_steps;       /* calls that returned an error, each with a message */
    int violations;         /* errors without a message, INTERNAL, wrong data, leftovers */
    uint64_t device_used;   /* device bytes allocated at the end */
    char first[512];        /* the first failed step, for the log */
};

/* Device bytes still allocated at the end of the clean run; the children inherit it. */
static uint64_t clean_device_used = UINT64_MAX;
/* Whether the simulated device has a virtual-memory group (elastic memory), asked once before
 * the clean run; the children inherit it. */
static int elastic_supported = 0;

static void violation(struct outcome *o, const char *format, const char *a, const char *b)
{
    ++o->violations;
    fprintf(stderr, "  VIOLATION: ");
    fprintf(stderr, format, a, b);
    fprintf(stderr, "\n");
}

/* One workload step: an error is fine (a fault was injected) if it is a real status with a
 * message. Returns 1 when the step succeeded. */
static int step(struct outcome *o, const char *what, tidal_status status)
{
    if (status == TIDAL_OK)
        return 1;
    const char *message = tidal_last_error();
    if (o->failed_steps++ == 0)
        snprintf(o->first, sizeof o->first, "%s: %s: %s", what, tidal_status_name(status),
                 message != NULL ? message : "(null)");
    if (message == NULL || message[0] == '\0')
        violation(o, "%s: %s with an empty message", what, tidal_status_name(status));
    if (status == TIDAL_ERROR_INTERNAL)
        violation(o, "%s: INTERNAL: %s", what, message != NULL ? message : "(null)");
    return 0;
}

static void *alloc_kind(tidal_context *ctx, struct outcome *o, const char *what, tidal_kind kind,
                        size_t size, uint32_t hints)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.hints = hints;
    desc.tag = what;
    void *ptr = NULL;
    if (!step(o, what, tidal_alloc(ctx, size, &desc, &ptr)))
        return NULL;
    return ptr;
}

static void release(tidal_context *ctx, struct outcome *o, const char *what, void **ptr)
{
    if (*ptr != NULL)
        step(o, what, tidal_free(ctx, *ptr));
    *ptr = NULL;
}

/* Destroys a stream; the fault fails one call, so a destroy that failed (the stream then
 * lives on, still tied to what tidal holds for it) must work the second time. */
static void destroy_stream(tidal_context *ctx, struct outcome *o, const char *what, void **stream)
{
    if (!step(o, what, tidal_stream_destroy(ctx, *stream)) &&
        !step(o, what, tidal_stream_destroy(ctx, *stream)))
        violation(o, "%s: a second destroy failed too%s", what, "");
    *stream = NULL;
}

/* The representative workload. Steps whose inputs failed to appear are skipped. */
static void workload(tidal_context *ctx, struct outcome *o)
{
    unsigned char *host_a = malloc(2 * MIB), *host_b = malloc(2 * MIB);
    if (host_a == NULL || host_b == NULL)
        abort();
    harness_fill(host_a, 2 * MIB, 1);

    void *dev = alloc_kind(ctx, o, "alloc device", TIDAL_KIND_DEVICE, 2 * MIB, 0);
    void *small = alloc_kind(ctx, o, "alloc small device", TIDAL_KIND_DEVICE, 4 * KIB, 0);
    void *big = alloc_kind(ctx, o, "alloc large device", TIDAL_KIND_DEVICE, 80 * MIB, 0);
    void *managed = alloc_kind(ctx, o, "alloc managed", TIDAL_KIND_MANAGED, 4 * MIB,
                               TIDAL_HINT_READ_MOSTLY);
    void *pinned = alloc_kind(ctx, o, "alloc pinned", TIDAL_KIND_PINNED, 512 * KIB, 0);
    void *pageable = alloc_kind(ctx, o, "alloc pageable", TIDAL_KIND_PAGEABLE, 256 * KIB, 0);
    void *automatic = alloc_kind(ctx, o, "alloc auto", TIDAL_KIND_AUTO, 64 * KIB,
                                 TIDAL_HINT_HOST_READ);

    /* Copies both ways: staged pageable ones (several chunks), pinned, managed, device. */
    if (dev != NULL) {
        step(o, "copy pageable->device", tidal_copy(ctx, dev, host_a, 2 * MIB));
        step(o, "copy device->pageable", tidal_copy(ctx, host_b, dev, 2 * MIB));
    }
    if (dev != NULL && pinned != NULL) {
        step(o, "copy pinned->device", tidal_copy(ctx, dev, pinned, 512 * KIB));
        step(o, "copy device->pinned", tidal_copy(ctx, pinned, dev, 512 * KIB));
    }
    if (managed != NULL && dev != NULL)
        step(o, "copy device->managed", tidal_copy(ctx, managed, dev, 2 * MIB));
    if (pageable != NULL && small != NULL)
        step(o, "copy pageable(tidal)->device", tidal_copy(ctx, small, pageable, 4 * KIB));

    /* Registered host memory copies directly. */
    if (step(o, "register", tidal_register(ctx, host_b, 2 * MIB))) {
        if (dev != NULL)
            step(o, "copy device->registered", tidal_copy(ctx, host_b, dev, 1 * MIB));
        step(o, "unregister", tidal_unregister(ctx, host_b));
    }

    /* A batch: host->device items and device->host items. */
    if (dev != NULL) {
        tidal_copy_item items[16];
        for (int i = 0; i < 8; ++i) {
            tidal_copy_item in = TIDAL_COPY_ITEM_INIT;
            in.dst = (unsigned char *)dev + (size_t)i * 8 * KIB;
            in.src = host_a + (size_t)i * 4 * KIB;
            in.size = 4 * KIB;
            items[i] = in;
            tidal_copy_item out = TIDAL_COPY_ITEM_INIT;
            out.dst = host_b + (size_t)i * 4 * KIB;
            out.src = (unsigned char *)dev + 1 * MIB + (size_t)i * 4 * KIB;
            out.size = 4 * KIB;
            items[8 + i] = out;
        }
        step(o, "copy_batch", tidal_copy_batch(ctx, items, 16, NULL));
    }

    /* Device 0 to device 1 and back over the peer link (enabled on the first copy), then a
     * staged copy between them (peer access is per pair: the third device has no link). */
    if (dev != NULL) {
        tidal_alloc_desc on1 = TIDAL_ALLOC_DESC_INIT;
        on1.kind = TIDAL_KIND_DEVICE;
        on1.device = 1;
        void *peer = NULL;
        if (step(o, "alloc device 1", tidal_alloc(ctx, 2 * MIB, &on1, &peer))) {
            step(o, "copy device 0->1", tidal_copy(ctx, peer, dev, 2 * MIB));
            step(o, "copy device 1->0", tidal_copy(ctx, dev, peer, 2 * MIB));
            release(ctx, o, "free device 1", &peer);
        }
        tidal_peer_info link = TIDAL_PEER_INFO_INIT;
        step(o, "peer info", tidal_peer_info_get(ctx, 0, 1, &link));
        on1.device = 2;
        void *far = NULL;
        if (step(o, "alloc device 2", tidal_alloc(ctx, 1 * MIB, &on1, &far))) {
            step(o, "copy device 0->2 (staged)", tidal_copy(ctx, far, dev, 1 * MIB));
            release(ctx, o, "free device 2", &far);
        }
    }

    /* Elastic memory: offload with a copy, a copy out of the offloaded home, restore, discard
     * keeping the chunks, restore from them, and the free (below) of a resident allocation. */
    void *elastic = NULL;
    if (elastic_supported)
        elastic = alloc_kind(ctx, o, "elastic", TIDAL_KIND_ELASTIC, 6 * MIB, 0);
    if (elastic != NULL) {
        step(o, "offload", tidal_offload(ctx, "elastic", 0, NULL, NULL));
        step(o, "copy elastic->pageable", tidal_copy(ctx, host_b, elastic, 1 * MIB));
        step(o, "restore", tidal_restore(ctx, "elastic", 0, NULL, NULL));
        step(o, "offload range, discard",
             tidal_offload_range(ctx, elastic, 1, TIDAL_OFFLOAD_DISCARD | TIDAL_OFFLOAD_KEEP_PHYSICAL, NULL, NULL));
        step(o, "restore range", tidal_restore_range(ctx, elastic, 1, 0, NULL, NULL));
    }

    /* Advice and prefetch of managed memory. */
    if (managed != NULL) {
        step(o, "advise", tidal_advise(ctx, managed, 4 * MIB, TIDAL_ADVICE_PREFERRED_DEVICE, 0));
        step(o, "prefetch to device", tidal_prefetch(ctx, managed, 4 * MIB, 0));
        step(o, "prefetch to host", tidal_prefetch(ctx, managed, 4 * MIB, TIDAL_DEVICE_HOST));
        step(o, "unadvise", tidal_advise(ctx, managed, 4 * MIB, 0, TIDAL_ADVICE_PREFERRED_DEVICE));
    }

    /* Kernels. */
    if (dev != NULL) {
        tidal_check check = TIDAL_CHECK_INIT;
        check.kind = TIDAL_CHECK_PATTERN_FILL;
        check.target = dev;
        check.size = 64 * KIB;
        check.seed = 7;
        step(o, "check fill", tidal_check_run(ctx, &check));
    }
    /* The atomic set with host threads at once: a failing copy, synchronisation or kernel must
     * still join the host threads. */
    if (managed != NULL) {
        tidal_check atomics = TIDAL_CHECK_INIT;
        atomics.kind = TIDAL_CHECK_ATOMIC_SET_SHARED;
        atomics.target = managed;
        atomics.size = TIDAL_ATOMIC_SET_BYTES;
        atomics.seed = 1;
        step(o, "check atomic set", tidal_check_run(ctx, &atomics));
    }

    /* Queries: device memory (mem_info), a managed range, the clock. */
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    step(o, "device info", tidal_device_info_get(ctx, 0, &info));
    if (managed != NULL) {
        tidal_range_info range = TIDAL_RANGE_INFO_INIT;
        step(o, "range query", tidal_range_query(ctx, managed, 4 * MIB, &range));
    }
    double seconds = 0;
    step(o, "clock", tidal_clock(ctx, &seconds));

    /* Streams: async allocations and frees, declarations under a budget. The stream is then
     * forgotten (what an application does before destroying a stream with its GPU runtime),
     * used again as a new one, and destroyed with async frees still queued on it; a second
     * stream is destroyed right after an async free without any synchronisation. */
    void *stream = NULL;
    if (step(o, "stream create", tidal_stream_create(ctx, 0, &stream))) {
        void *async_a = NULL, *async_b = NULL;
        if (step(o, "alloc_async", tidal_alloc_async(ctx, 128 * KIB, NULL, stream, &async_a))) {
            step(o, "copy_async", tidal_copy_async(ctx, async_a, host_a, 128 * KIB, stream));
            step(o, "free_async", tidal_free_async(ctx, async_a, stream));
        }
        if (step(o, "alloc_async again", tidal_alloc_async(ctx, 128 * KIB, NULL, stream, &async_b)))
            step(o, "free_async again", tidal_free_async(ctx, async_b, stream));

        step(o, "budget", tidal_budget_set(ctx, 0, 4 * MIB));
        void *phase_a = alloc_kind(ctx, o, "alloc managed a", TIDAL_KIND_MANAGED, 3 * MIB, 0);
        void *phase_b = alloc_kind(ctx, o, "alloc managed b", TIDAL_KIND_MANAGED, 3 * MIB, 0);
        tidal_access access = TIDAL_ACCESS_INIT;
        access.size = 3 * MIB;
        access.mode = TIDAL_ACCESS_READ_WRITE;
        if (phase_a != NULL) {
            access.ptr = phase_a;
            step(o, "declare a", tidal_declare(ctx, stream, &access, 1, 0));
        }
        if (phase_b != NULL) {
            access.ptr = phase_b;
            step(o, "stream synchronize", tidal_stream_synchronize(ctx, stream));
            step(o, "declare b (evicts a)", tidal_declare(ctx, stream, &access, 1, 0));
        }
        step(o, "stream synchronize", tidal_stream_synchronize(ctx, stream));
        step(o, "end phase", tidal_declare(ctx, stream, NULL, 0, 0));
        step(o, "stream synchronize", tidal_stream_synchronize(ctx, stream));
        release(ctx, o, "free managed a", &phase_a);
        release(ctx, o, "free managed b", &phase_b);
        step(o, "budget off", tidal_budget_set(ctx, 0, 0));
        if (elastic != NULL) {
            /* Evicted under the budget above: a declaration maps it and copies it in again. */
            access.ptr = elastic;
            access.size = 6 * MIB;
            step(o, "declare elastic", tidal_declare(ctx, stream, &access, 1, 0));
            step(o, "end phase elastic", tidal_declare(ctx, stream, NULL, 0, 0));
        }

        void *async_c = NULL;
        if (step(o, "alloc_async before forget",
                 tidal_alloc_async(ctx, 64 * KIB, NULL, stream, &async_c)))
            step(o, "free_async before forget", tidal_free_async(ctx, async_c, stream));
        step(o, "stream forget", tidal_stream_forget(ctx, stream));
        if (step(o, "alloc_async after forget",
                 tidal_alloc_async(ctx, 64 * KIB, NULL, stream, &async_c)))
            step(o, "free_async after forget", tidal_free_async(ctx, async_c, stream));
        destroy_stream(ctx, o, "stream destroy", &stream);
    }
    void *side = NULL;
    if (step(o, "side stream create", tidal_stream_create(ctx, 0, &side))) {
        void *async_d = NULL;
        if (step(o, "side alloc_async", tidal_alloc_async(ctx, 256 * KIB, NULL, side, &async_d))) {
            step(o, "side copy_async", tidal_copy_async(ctx, async_d, host_a, 256 * KIB, side));
            step(o, "side free_async", tidal_free_async(ctx, async_d, side));
        }
        destroy_stream(ctx, o, "side stream destroy", &side);
    }

    /* A statistics snapshot, which reads the simulated device's page-fault counts
     * (paging_stats per device, range_paging for the managed buffer still live). */
    char *stats = malloc(256 * KIB);
    size_t stats_needed = 0;
    if (stats == NULL)
        abort();
    step(o, "stats snapshot", tidal_stats_json(ctx, stats, 256 * KIB, &stats_needed));
    free(stats);

    release(ctx, o, "free device", &dev);
    release(ctx, o, "free small device", &small);
    release(ctx, o, "free large device", &big);
    release(ctx, o, "free managed", &managed);
    release(ctx, o, "free pinned", &pinned);
    release(ctx, o, "free pageable", &pageable);
    release(ctx, o, "free auto", &automatic);
    release(ctx, o, "free elastic", &elastic);
    uint64_t released = 0;
    step(o, "pool trim", tidal_pool_trim(ctx, &released));

    /* Keeps working: a clean allocation, a round trip through it, and a free. The fault may
     * be one of these very calls (it fails once): only a second failure is a broken context. */
    int healthy = 0;
    for (int attempt = 0; attempt < 2 && !healthy; ++attempt) {
        void *check = alloc_kind(ctx, o, "after: alloc", TIDAL_KIND_DEVICE, 256 * KIB, 0);
        if (check == NULL)
            continue;
        memset(host_b, 0, 256 * KIB);
        healthy = step(o, "after: copy in", tidal_copy(ctx, check, host_a, 256 * KIB)) &&
                  step(o, "after: copy out", tidal_copy(ctx, host_b, check, 256 * KIB));
        if (healthy && memcmp(host_a, host_b, 256 * KIB) != 0)
            violation(o, "%s%s", "a clean round trip after the fault lost data", "");
        healthy = step(o, "after: free", tidal_free(ctx, check)) && healthy;
    }
    if (!healthy)
        violation(o, "%s%s", "the context no longer allocates, copies and frees", "");

    /* Nothing is in use any more, whatever failed, and a trim gives everything back: blocks
     * freed on the destroyed streams included. A trim the fault failed is tried once more. */
    if (!step(o, "after: pool trim", tidal_pool_trim(ctx, &released)))
        step(o, "after: pool trim again", tidal_pool_trim(ctx, &released));
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        tidal_pool_stats stats = TIDAL_POOL_STATS_INIT;
        int32_t device = kinds[k] == TIDAL_KIND_PINNED ? TIDAL_DEVICE_HOST : 0;
        if (tidal_pool_stats_get(ctx, kinds[k], device, &stats) != TIDAL_OK) {
            violation(o, "pool stats of %s: %s", tidal_kind_name(kinds[k]), tidal_last_error());
            continue;
        }
        if (stats.allocations != stats.frees)
            violation(o, "the %s pool counts more allocations than frees%s",
                      tidal_kind_name(kinds[k]), "");
        if (stats.in_use_bytes != 0 || stats.reserved_bytes != 0)
            violation(o, "the %s pool still holds memory after a trim%s",
                      tidal_kind_name(kinds[k]), "");
    }
    /* ... and the device agrees: no more of its memory is allocated than after the clean run
     * (copy_batch keeps its staging buffers until teardown), so nothing a pool dropped from
     * its books is still allocated on the device. */
    tidal_device_info after = TIDAL_DEVICE_INFO_INIT;
    if (step(o, "after: device info", tidal_device_info_get(ctx, 0, &after))) {
        o->device_used = after.total_memory - after.free_memory;
        if (o->device_used > clean_device_used)
            violation(o, "the device has more memory allocated after a trim than in the clean run%s%s",
                      "", "");
    }
    free(host_a);
    free(host_b);
}

static const char *kConfig =
    "runtime = \"sim\"\n"
    "[sim]\n"
    "capacity = \"1GiB\"\n"
    "profile = \"pcie-switch2\"\n" /* two linked devices, and a third without a link */
    "devices = 3\n"
    "[copy]\n"
    "chunk_size = \"256KiB\"\n"
    "threads = 2\n"
    "[telemetry]\n"
    "ranges = true\n"; /* so that range_push and range_pop are swept too */

/* Runs the workload in a child, failing call `nth` of `operation` (NULL: no fault). The
 * child's exit status: 0 clean, 1 violations, 2 the context could not be created or destroyed
 * cleanly without the fault saying so. */
static int run_case(const char *operation, unsigned long nth, const char *counts_path,
                    int *failed_steps, uint64_t *device_used)
{
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0)
        abort();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        close(pipe_fd[0]);
        setenv("TIDAL_SIM_CALL_COUNTS", counts_path, 1);
        char *config = operation == NULL
                           ? harness_format("%s", kConfig)
                           : harness_format("%s[[sim.fault]]\noperation = \"%s\"\nnth = %lu\n"
                                            "count = 1\nerror = \"hipErrorOutOfMemory\"\n",
                                            kConfig, operation, nth);
        struct outcome o = {0, 0, 0, {0}};
        tidal_context *ctx = NULL;
        int status = 0;
        tidal_status created = tidal_context_create_from_string(config, &ctx);
        if (created != TIDAL_OK && operation != NULL) {
            /* The fault hit creation itself: refusing to create is the right answer. */
            step(&o, "context create", created);
            status = o.violations > 0 ? 1 : 0;
        } else if (created != TIDAL_OK) {
            fprintf(stderr, "  context creation failed: %s\n", tidal_last_error());
            status = 2;
        } else {
            workload(ctx, &o);
            tidal_status destroyed = tidal_context_destroy(ctx);
            if (destroyed != TIDAL_OK) {
                step(&o, "context destroy", destroyed);
                fprintf(stderr, "  context destroy: %s: %s\n", tidal_status_name(destroyed),
                        tidal_last_error());
            }
            status = o.violations > 0 ? 1 : 0;
        }
        if (o.failed_steps > 0 && getenv("TIDAL_TEST_VERBOSE") != NULL)
            fprintf(stderr, "  %s #%lu: %d failed step(s), first %s\n", operation ? operation : "-",
                    nth, o.failed_steps, o.first);
        if (write(pipe_fd[1], &o, sizeof o) != (ssize_t)sizeof o)
            status = 2;
        close(pipe_fd[1]);
        free(config);
        exit(status); /* exit, not _exit: LeakSanitizer checks the child at exit */
    }
    close(pipe_fd[1]);
    struct outcome o;
    if (read(pipe_fd[0], &o, sizeof o) != (ssize_t)sizeof o) {
        o.failed_steps = -1;
        o.device_used = UINT64_MAX;
    }
    *failed_steps = o.failed_steps;
    *device_used = o.device_used;
    close(pipe_fd[0]);
    int wstatus = 0;
    if (waitpid(pid, &wstatus, 0) != pid)
        abort();
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return WEXITSTATUS(wstatus);
}

/* Reads the "operation count" lines the simulated device wrote; returns how many. */
static size_t read_counts(const char *path, char names[][32], unsigned long *counts)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return 0;
    size_t n = 0;
    while (n < MAX_OPERATIONS && fscanf(file, "%31s %lu", names[n], &counts[n]) == 2)
        ++n;
    fclose(file);
    return n;
}

/* The next call index to sweep after `nth` (see the file comment). */
static unsigned long next_call(unsigned long nth, unsigned long calls)
{
    if (nth < kAllCalls || getenv("TIDAL_TEST_FAULT_ALL") != NULL)
        return nth + 1;
    if (nth == calls)
        return calls + 1;
    return nth + kStride <= calls ? nth + kStride : calls;
}

static int wanted(const char *operation)
{
    const char *only = getenv("TIDAL_TEST_FAULT_OPS");
    if (only == NULL || *only == '\0')
        return 1;
    size_t length = strlen(operation);
    for (const char *p = only; (p = strstr(p, operation)) != NULL; p += length)
        if ((p == only || p[-1] == ',') && (p[length] == '\0' || p[length] == ','))
            return 1;
    return 0;
}

int main(void)
{
    harness_isolate_environment();
    char *dir = harness_temp_dir();
    char *counts = harness_format("%s/calls", dir);

    tidal_context *probe = harness_context(kConfig);
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_ELASTIC;
    void *p = NULL;
    elastic_supported = tidal_alloc(probe, 1, &desc, &p) == TIDAL_OK;
    if (elastic_supported)
        tidal_free(probe, p);
    tidal_context_destroy(probe);
    printf("elastic memory: %s\n", elastic_supported ? "swept" : "not supported by the simulated device, left out");

    int failed_steps = 0;
    int rc = run_case(NULL, 0, counts, &failed_steps, &clean_device_used);
    if (rc != 0 || failed_steps != 0) {
        fprintf(stderr, "the clean run failed (exit %d, %d failed steps)\n", rc, failed_steps);
        return 1;
    }
    printf("clean run: %llu device bytes allocated at the end\n",
           (unsigned long long)clean_device_used);
    static char names[MAX_OPERATIONS][32];
    unsigned long calls[MAX_OPERATIONS];
    const size_t operations = read_counts(counts, names, calls);
    if (operations == 0) {
        fprintf(stderr, "no call counts from the simulated device (TIDAL_SIM_CALL_COUNTS)\n");
        return 1;
    }
    for (size_t op = 0; op < operations; ++op)
        printf("%-18s %lu call(s)\n", names[op], calls[op]);

    int bad = 0, cases = 0, absorbed = 0;
    for (size_t op = 0; op < operations; ++op) {
        if (!wanted(names[op]))
            continue;
        for (unsigned long nth = 1; nth <= calls[op]; nth = next_call(nth, calls[op])) {
            ++cases;
            remove(counts);
            uint64_t device_used = 0;
            rc = run_case(names[op], nth, counts, &failed_steps, &device_used);
            if (rc != 0) {
                ++bad;
                printf("FAIL %s #%lu: exit %d\n", names[op], nth, rc);
            } else if (failed_steps == 0) {
                /* The core recovered (a retry, a fallback, a failure at teardown that can only
                 * be logged): the workload never saw it. */
                ++absorbed;
                if (getenv("TIDAL_TEST_VERBOSE") != NULL)
                    printf("absorbed %s #%lu\n", names[op], nth);
            }
        }
    }
    printf("%d case(s), %d failing, %d absorbed by the core\n", cases, bad, absorbed);
    remove(counts);
    harness_remove_dir(dir);
    free(counts);
    free(dir);
    return bad == 0 ? 0 : 1;
}

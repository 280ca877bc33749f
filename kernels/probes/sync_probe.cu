// Which CUDA calls wait for a kernel running on another stream? For each call: a spin kernel of
// SPIN ms on stream A, then the call from the host; prints the call's host time and when the
// work it queued (if any) completed, both in ms from the call's start. ~SPIN ms = serialised.
// Then: how long a launch takes while another thread is inside cudaMemPrefetchAsync (why the
// migration worker holds lookahead prefetches, core/migration/migration_worker.h). Last: the
// same for the virtual-memory calls elastic memory's worker makes (map, access, unmap) while
// the application's thread launches and waits: do they hold the launch up?
// Built with the nvcc kernels as build/kernels/probes/sync-probe; run on a GPU machine. Plain
// CUDA on purpose: it measures the vendor's calls, not tidal's. At most 512 MiB of managed memory.
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <atomic>
#include <algorithm>
#include <functional>

#define CK(x) do { auto e_ = (x); if ((int)e_) { printf("%s failed %d at %d\n", #x, (int)e_, __LINE__); exit(1); } } while (0)
__global__ void spin(long long ns) {
    unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); if ((long long)(t - t0) > ns) break; }
}
static double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
    const double SPIN = 20.0; const size_t CH = 64ull << 20;
    CK(cudaSetDevice(0)); CK(cudaFree(0));
    cudaStream_t A, B; CK(cudaStreamCreateWithFlags(&A, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&B, cudaStreamNonBlocking));
    CUmemAllocationProp prop{}; prop.type = CU_MEM_ALLOCATION_TYPE_PINNED; prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;
    CUmemAccessDesc acc{}; acc.location = prop.location; acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUdeviceptr va; CK(cuMemAddressReserve(&va, 4 * CH, 0, 0, 0));
    CUmemGenericAllocationHandle h[4]; for (int i = 0; i < 4; ++i) CK(cuMemCreate(&h[i], CH, &prop, 0));
    CK(cuMemMap(va, CH, 0, h[0], 0)); CK(cuMemSetAccess(va, CH, &acc, 1));
    CK(cuMemMap(va + CH, CH, 0, h[1], 0)); CK(cuMemSetAccess(va + CH, CH, &acc, 1));
    void *pinned; CK(cudaHostAlloc(&pinned, CH, 0)); memset(pinned, 1, CH);
    char *managed; CK(cudaMallocManaged((void **)&managed, 4 * CH)); 
    cudaEvent_t ev; CK(cudaEventCreate(&ev));
    auto probe = [&](const char *name, std::function<void()> op, bool queued) {
        spin<<<1, 1, 0, A>>>((long long)(SPIN * 1e6)); CK(cudaGetLastError());
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        double t0 = now_ms(); op(); double t1 = now_ms();
        bool running = cudaStreamQuery(A) == cudaErrorNotReady;
        double done = -1;
        if (queued) { CK(cudaEventRecord(ev, B)); while (cudaEventQuery(ev) == cudaErrorNotReady) {} done = now_ms() - t0; }
        CK(cudaStreamSynchronize(A));
        printf("%-44s host %8.3f ms, kernel still running after: %s, queued work done at %8.3f ms\n", name, t1 - t0, running ? "yes" : "NO ", done);
    };
    for (int rep = 0; rep < 2; ++rep) {
        probe("nothing", [] {}, true);
        probe("cudaMemcpyAsync H2D 64 MiB pinned on B", [&] { CK(cudaMemcpyAsync((void *)va, pinned, CH, cudaMemcpyHostToDevice, B)); }, true);
        probe("cuMemMap 64 MiB", [&] { CK(cuMemMap(va + 2 * CH, CH, 0, h[2], 0)); }, false);
        probe("cuMemSetAccess 64 MiB", [&] { CK(cuMemSetAccess(va + 2 * CH, CH, &acc, 1)); }, false);
        probe("cudaMemcpyAsync into new map on B", [&] { CK(cudaMemcpyAsync((void *)(va + 2 * CH), pinned, CH, cudaMemcpyHostToDevice, B)); }, true);
        probe("cuMemUnmap 64 MiB (mapped, idle)", [&] { CK(cuMemUnmap(va + 2 * CH, CH)); }, false);
        probe("cuMemMap+SetAccess+memcpy on B", [&] { CK(cuMemMap(va + 2 * CH, CH, 0, h[2], 0)); CK(cuMemSetAccess(va + 2 * CH, CH, &acc, 1)); CK(cudaMemcpyAsync((void *)(va + 2 * CH), pinned, CH, cudaMemcpyHostToDevice, B)); }, true);
        probe("cuMemUnmap again", [&] { CK(cuMemUnmap(va + 2 * CH, CH)); }, false);
        CUmemGenericAllocationHandle x;
        probe("cuMemCreate 64 MiB", [&] { CK(cuMemCreate(&x, CH, &prop, 0)); }, false);
        probe("cuMemRelease 64 MiB", [&] { CK(cuMemRelease(x)); }, false);
        memset(managed, 2, 4 * CH);
        probe("cudaMemPrefetchAsync managed 64 MiB to dev on B", [&] { CK(cudaMemPrefetchAsync(managed, CH, cudaMemLocation{cudaMemLocationTypeDevice, 0}, 0, B)); }, true);
        probe("cudaMemPrefetchAsync 64 MiB (next) on B", [&] { CK(cudaMemPrefetchAsync(managed + CH, CH, cudaMemLocation{cudaMemLocationTypeDevice, 0}, 0, B)); }, true);
        probe("cudaMemAdvise readmostly 64 MiB", [&] { CK(cudaMemAdvise(managed + 2 * CH, CH, cudaMemAdviseSetReadMostly, cudaMemLocation{cudaMemLocationTypeDevice, 0})); }, false);
        probe("cudaMemPrefetchAsync 64 MiB to host on B", [&] { CK(cudaMemPrefetchAsync(managed, CH, cudaMemLocation{cudaMemLocationTypeHost, 0}, 0, B)); }, true);
        probe("cudaEventRecord+StreamWaitEvent", [&] { CK(cudaEventRecord(ev, B)); CK(cudaStreamWaitEvent(B, ev, 0)); }, true);
    }
    // A launch from this thread while another thread is inside cudaMemPrefetchAsync (host to
    // device, 64 MiB): does the launch wait for the prefetch call?
    for (int rep = 0; rep < 4; ++rep) {
        CK(cudaMemPrefetchAsync(managed, 2 * CH, cudaMemLocation{cudaMemLocationTypeHost, 0}, 0, B)); CK(cudaStreamSynchronize(B));
        memset(managed, 3, 2 * CH);
        double p0 = 0, p1 = 0;
        std::thread t([&] { p0 = now_ms(); CK(cudaMemPrefetchAsync(managed, 2 * CH, cudaMemLocation{cudaMemLocationTypeDevice, 0}, 0, B)); p1 = now_ms(); });
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        double l0 = now_ms(); spin<<<1, 1, 0, A>>>(1000000); double l1 = now_ms();
        CK(cudaEventRecord(ev, A)); double l2 = now_ms();
        t.join(); CK(cudaStreamSynchronize(A)); CK(cudaStreamSynchronize(B));
        printf("prefetch 128 MiB on thread 2: call %.3f..%.3f ms; launch on thread 1 at %.3f took %.3f ms, event record %.3f ms\n",
               0.0, p1 - p0, l0 - p0, l1 - l0, l2 - l1);
    }
    // Launch + event record + query on this thread, timed one by one, while another thread maps,
    // sets access and unmaps 64 MiB over and over (as elastic memory's worker does); then alone.
    for (int busy = 1; busy >= 0; --busy) {
        std::atomic<bool> stop{false};
        std::atomic<long> cycles{0};
        std::thread t([&] {
            while (busy && !stop.load()) {
                CK(cuMemMap(va + 3 * CH, CH, 0, h[3], 0)); CK(cuMemSetAccess(va + 3 * CH, CH, &acc, 1)); CK(cuMemUnmap(va + 3 * CH, CH));
                cycles.fetch_add(1);
            }
        });
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        double worst = 0, sum = 0; const int N = 400;
        for (int i = 0; i < N; ++i) {
            double l0 = now_ms(); spin<<<1, 1, 0, A>>>(20000); CK(cudaEventRecord(ev, A)); (void)cudaEventQuery(ev); double l1 = now_ms();
            worst = std::max(worst, l1 - l0); sum += l1 - l0;
            CK(cudaEventSynchronize(ev));
        }
        stop = true; t.join();
        printf("launch+record+query on thread 1, %s: mean %.3f ms, worst %.3f ms (%ld map/access/unmap cycles of 64 MiB on thread 2)\n",
               busy ? "thread 2 mapping" : "alone", sum / N, worst, cycles.load());
    }
    // One physical chunk mapped at two addresses: a 64 MiB copy into the second mapping is
    // queued, then the first is unmapped. Does the unmap wait for the copy into the same
    // memory (elastic memory's moves map an incoming chunk at its victim's memory this way)?
    for (int rep = 0; rep < 3; ++rep) {
        CK(cuMemMap(va + 2 * CH, CH, 0, h[2], 0)); CK(cuMemSetAccess(va + 2 * CH, CH, &acc, 1));
        CK(cudaStreamSynchronize(B));
        double a0 = now_ms();
        CK(cuMemMap(va + 3 * CH, CH, 0, h[2], 0)); double a1 = now_ms();
        CK(cuMemSetAccess(va + 3 * CH, CH, &acc, 1)); double a2 = now_ms();
        CK(cudaMemcpyAsync((void *)(va + 3 * CH), pinned, CH, cudaMemcpyHostToDevice, B)); double a3 = now_ms();
        CK(cuMemUnmap(va + 2 * CH, CH)); double a4 = now_ms();
        bool running = cudaStreamQuery(B) == cudaErrorNotReady;
        CK(cudaStreamSynchronize(B)); double a5 = now_ms();
        CK(cuMemUnmap(va + 3 * CH, CH));
        printf("aliased: map %.3f, access %.3f, copy call %.3f, unmap of the other mapping %.3f ms, copy still running after: %s, copy done at %.3f ms\n",
               a1 - a0, a2 - a1, a3 - a2, a4 - a3, running ? "yes" : "NO", a5 - a0);
    }
    // The same without aliasing: the other mapping is of another chunk (the unmap of an idle range).
    for (int rep = 0; rep < 2; ++rep) {
        CK(cuMemMap(va + 2 * CH, CH, 0, h[2], 0)); CK(cuMemSetAccess(va + 2 * CH, CH, &acc, 1));
        CK(cuMemMap(va + 3 * CH, CH, 0, h[3], 0)); CK(cuMemSetAccess(va + 3 * CH, CH, &acc, 1));
        CK(cudaStreamSynchronize(B));
        double a3 = now_ms();
        CK(cudaMemcpyAsync((void *)(va + 3 * CH), pinned, CH, cudaMemcpyHostToDevice, B));
        double b0 = now_ms(); CK(cuMemUnmap(va + 2 * CH, CH)); double b1 = now_ms();
        bool running = cudaStreamQuery(B) == cudaErrorNotReady;
        CK(cudaStreamSynchronize(B));
        CK(cuMemUnmap(va + 3 * CH, CH));
        printf("not aliased: unmap of an idle range during a copy %.3f ms, copy still running after: %s (copy call %.3f)\n", b1 - b0, running ? "yes" : "NO", b0 - a3);
    }
    // Transfer rates alone, for scale.
    double t0 = now_ms(); CK(cudaMemPrefetchAsync(managed + 3 * CH, CH, cudaMemLocation{cudaMemLocationTypeDevice, 0}, 0, B)); double t1 = now_ms(); CK(cudaStreamSynchronize(B));
    printf("prefetch 64 MiB alone: host call %.3f ms, done %.3f ms\n", t1 - t0, now_ms() - t0);
    return 0;
}

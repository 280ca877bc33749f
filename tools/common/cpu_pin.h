// Pins the calling thread to the CPU it is running on while the object lives, then gives the
// thread its CPU set back. For latency benchmarks of calls that take tens of nanoseconds: a
// move to another core in the middle of a batch (cold caches there) would be counted in them.
// Threads started while it lives inherit the pin, so start them after. Linux only; elsewhere,
// or when the kernel refuses, it pins nothing and cpu() is -1.
#pragma once

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace tidal_tools {

class CpuPin {
public:
    explicit CpuPin(bool wanted = true)
    {
#if defined(__linux__)
        if (!wanted || pthread_getaffinity_np(pthread_self(), sizeof before_, &before_) != 0)
            return;
        const int cpu = sched_getcpu();
        if (cpu < 0)
            return;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0)
            cpu_ = cpu;
#else
        (void)wanted;
#endif
    }
    ~CpuPin()
    {
#if defined(__linux__)
        if (cpu_ >= 0)
            pthread_setaffinity_np(pthread_self(), sizeof before_, &before_);
#endif
    }
    CpuPin(const CpuPin &) = delete;
    CpuPin &operator=(const CpuPin &) = delete;

    // The CPU the thread is pinned to, or -1.
    int cpu() const noexcept { return cpu_; }

private:
    int cpu_ = -1;
#if defined(__linux__)
    cpu_set_t before_{};
#endif
};

} // namespace tidal_tools

// A named range in the vendor's profiler (Nsight Systems through NVTX, rocprof through roctx)
// around one of tidal's migrations, evictions or copies, for the scope of this object. With
// [telemetry] ranges off (the default) it costs one load and one predictable branch; a push
// the profiler refuses is not popped, and never fails the operation it names.
#pragma once

#include "runtime/runtime.h"

namespace tidal {

class ProfilerRange {
public:
    ProfilerRange(const Runtime &runtime, const char *name) noexcept
    {
        if (runtime.ranges_on()) [[unlikely]]
            open(runtime, name);
    }
    ~ProfilerRange()
    {
        if (runtime_) [[unlikely]]
            runtime_->range_pop();
    }
    ProfilerRange(const ProfilerRange &) = delete;
    ProfilerRange &operator=(const ProfilerRange &) = delete;

private:
    [[gnu::cold, gnu::noinline]] void open(const Runtime &runtime, const char *name) noexcept
    {
        if (runtime.range_push(name) == 0)
            runtime_ = &runtime;
    }

    const Runtime *runtime_ = nullptr; // set while a range is open
};

} // namespace tidal

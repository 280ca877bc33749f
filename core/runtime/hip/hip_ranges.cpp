// Profiler ranges through roctx, loaded with dlopen (libroctx64.so) the first time a range is
// pushed, so that the module links nothing more: without roctx (or without rocprof, whose
// tracer roctx reports to) the calls do nothing. A missing library answers hipErrorNotSupported,
// which the core ignores.
#include <dlfcn.h>

#include <hip/hip_runtime_api.h>

#include <mutex>

#include "hip_entry_points.h"

namespace tidal::hip {
namespace {

struct Roctx {
    int (*push)(const char *) = nullptr; // roctxRangePushA
    int (*pop)() = nullptr;              // roctxRangePop
};

const Roctx &roctx() noexcept
{
    static Roctx r;
    static std::once_flag once;
    std::call_once(once, [] {
        // Kept open for the process: the tracer may still hold the names it was given.
        void *lib = dlopen("libroctx64.so", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            lib = dlopen("libroctx64.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            return;
        r.push = reinterpret_cast<int (*)(const char *)>(dlsym(lib, "roctxRangePushA"));
        r.pop = reinterpret_cast<int (*)()>(dlsym(lib, "roctxRangePop"));
        if (!r.push || !r.pop)
            r = Roctx{};
    });
    return r;
}

} // namespace

int rt_range_push(void *, const char *name) noexcept
{
    const Roctx &r = roctx();
    if (!r.push)
        return static_cast<int>(hipErrorNotSupported);
    r.push(name);
    return 0;
}

int rt_range_pop(void *) noexcept
{
    const Roctx &r = roctx();
    if (!r.pop)
        return static_cast<int>(hipErrorNotSupported);
    r.pop();
    return 0;
}

} // namespace tidal::hip

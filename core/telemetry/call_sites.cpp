#include "telemetry/call_sites.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <cstdlib>
#include <memory>

namespace tidal::telemetry {
namespace {

// The object (shared library or executable) holding `address`; nullptr when unknown.
const void *object_of(const void *address)
{
    Dl_info info{};
    return dladdr(address, &info) ? info.dli_fbase : nullptr;
}

} // namespace

void CallSites::capture(const void *base)
{
    Stack s;
    s.depth = backtrace(s.frames.data(), kDepth);
    std::lock_guard lock(mutex_);
    stacks_[base] = s;
}

std::vector<std::string> CallSites::describe(const void *base) const
{
    Stack s;
    {
        std::lock_guard lock(mutex_);
        auto it = stacks_.find(base);
        if (it == stacks_.end())
            return {};
        s = it->second;
    }
    // Frames inside tidal say how tidal allocates, not who asked: the caller's frames start at
    // the first one outside the object this code is in, after its frames. Frames before tidal's
    // own are skipped too: a sanitizer's backtrace interceptor sits there. (Linked statically,
    // there is no frame outside: then every frame is shown.)
    const void *self = object_of(reinterpret_cast<const void *>(&object_of));
    auto in_self = [&](int i) { return self && object_of(s.frames[static_cast<size_t>(i)]) == self; };
    int first = 0;
    while (first < s.depth && !in_self(first))
        ++first;
    while (first < s.depth && in_self(first))
        ++first;
    if (first == s.depth)
        first = 0;
    std::unique_ptr<char *, decltype(&std::free)> names(backtrace_symbols(s.frames.data() + first, s.depth - first),
                                                        &std::free);
    std::vector<std::string> out;
    for (int i = 0; i < s.depth - first; ++i)
        out.emplace_back(names ? names.get()[i] : "?");
    return out;
}

} // namespace tidal::telemetry

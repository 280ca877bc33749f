// The call stack of each allocation, kept only with [telemetry] leak_backtrace = true so that a
// leak report can say where the leaked memory was allocated. Stacks are raw return addresses
// (backtrace(3)); names are looked up only when a report asks for them.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tidal::telemetry {

class CallSites {
public:
    // Remembers the caller's stack for the allocation at `base`. A later allocation at the same
    // base replaces it, so nothing needs forgetting when memory is freed: the stack kept for a
    // live allocation's base is always its own.
    void capture(const void *base);
    // The frames of the stack kept for `base`, outside libtidal, symbolised ("binary(function+0x1f)
    // [0x...]"); empty when none was kept.
    std::vector<std::string> describe(const void *base) const;

private:
    static constexpr int kDepth = 24;
    struct Stack {
        std::array<void *, kDepth> frames{};
        int depth = 0;
    };
    mutable std::mutex mutex_;
    std::unordered_map<const void *, Stack> stacks_;
};

} // namespace tidal::telemetry

// Fails chosen calls of the simulated device on purpose, so error paths can be tested.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "config/fault_operations.h"
#include "config/settings.h"

namespace tidal::sim {

// One per name of kFaultOperations (config/fault_operations.h), in its order.
enum class Operation : std::size_t {
    alloc,
    free,
    prefetch,
    advise,
    memcpy,
    memset,
    host_register, // "register"
    create,
    kernel, // every kernel_* entry point
    host_unregister, // "unregister"
    device_count,
    device_props,
    mem_info,
    pointer_kind,
    query_range,
    stream_create,
    stream_destroy,
    stream_synchronize,
    event_create,
    event_destroy,
    event_record,
    stream_wait_event,
    event_synchronize,
    event_query,
    event_elapsed_ms,
    device_synchronize,
    clock,
    vmm_granularity,
    vmm_reserve,
    vmm_release,
    vmm_create,
    vmm_destroy,
    vmm_map,
    vmm_set_access,
    vmm_unmap,
    host_copy,
    peer_info,
    peer_enable,
    memcpy_peer,
    range_push,
    range_pop,
    paging_stats,
    range_paging,
};
inline constexpr std::size_t kOperationCount = kFaultOperations.size();
static_assert(static_cast<std::size_t>(Operation::range_paging) + 1 == kOperationCount,
              "Operation follows kFaultOperations one to one");

// Each operation has its own call counter (1-based, per runtime instance). A FaultSpec
// {operation, nth, count, native_error} fails calls nth .. nth+count-1 of that operation
// (count 0: every call from nth on). When several specs cover one call, the first listed
// wins. Counting is lock-free so the injector is safe on any thread.
class FaultInjector {
public:
    // Throws std::invalid_argument for an unknown operation name or nth == 0: a fault that
    // could never fire is a mistake in the test that asked for it.
    explicit FaultInjector(std::vector<FaultSpec> specs);

    struct Verdict {
        int native_error = 0; // 0: the call proceeds
        uint64_t call = 0;    // this call's number for its operation
    };
    // Counts one call of `op` and says whether it must fail.
    Verdict check(Operation op) noexcept;
    uint64_t calls(Operation op) const noexcept;

    static std::optional<Operation> parse(std::string_view name) noexcept;
    static const char *name(Operation op) noexcept;

private:
    struct Rule {
        Operation op;
        uint64_t nth;
        uint64_t count;
        int native_error;
    };
    std::vector<Rule> rules_;
    std::array<std::atomic<uint64_t>, kOperationCount> calls_{};
};

} // namespace tidal::sim

#include "elastic/host_home.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "log/logger.h"
#include "runtime/numa_binder.h"
#include "status/error.h"

namespace tidal::elastic {

namespace {
[[noreturn]] void no_home(size_t size, const std::string &why)
{
    throw Error(TIDAL_ERROR_OUT_OF_MEMORY, fmt::format("no pinned host home of {} bytes for elastic memory: {}", size, why),
                "free host memory, or discard what need not be kept (TIDAL_OFFLOAD_DISCARD)");
}
} // namespace

HostHome::HostHome(Runtime &runtime, size_t size, int32_t device) : runtime_(runtime), size_(size), device_(device)
{
    if (runtime_.supports(RuntimeOp::host_register) && runtime_.supports(RuntimeOp::host_unregister)) {
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const size_t rounded = (size + page - 1) / page * page;
        data_ = static_cast<char *>(std::aligned_alloc(page, rounded));
        if (!data_)
            no_home(size, "the host has no memory left");
        // Not touched yet: registering faults the pages in, on the node the policy names.
        if (const int node = runtime_.numa_node_for(TIDAL_KIND_PINNED, device); node >= 0)
            if (std::string failed = NumaBinder::bind_area(data_, rounded, node); !failed.empty())
                runtime_.note_numa_failure(TIDAL_KIND_PINNED, device, node, failed);
        try {
            runtime_.host_register(data_, size, "registering the host home");
        } catch (const Error &e) {
            std::free(data_);
            no_home(size, e.what());
        }
        registered_ = true;
        return;
    }
    try {
        data_ = static_cast<char *>(runtime_.alloc(TIDAL_KIND_PINNED, device, size)); // bound by the runtime
    } catch (const Error &e) {
        no_home(size, e.what());
    }
}

HostHome::~HostHome()
{
    if (registered_) {
        if (int rc = runtime_.host_unregister_noexcept(data_); rc != 0)
            log_error(fmt::format("unregistering the {}-byte host home at {} failed: {} ({})", size_,
                                  static_cast<void *>(data_), runtime_.native_name(rc), rc));
        std::free(data_);
        return;
    }
    if (int rc = runtime_.free(TIDAL_KIND_PINNED, device_, data_, size_); rc != 0)
        log_error(fmt::format("freeing the {}-byte host home at {} failed: {} ({})", size_, static_cast<void *>(data_),
                              runtime_.native_name(rc), rc));
}

} // namespace tidal::elastic

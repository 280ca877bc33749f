#include "elastic/host_home.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "log/logger.h"
#include "status/error.h"

namespace tidal::elastic {

namespace {
[[noreturn]] void no_home(size_t size, const std::string &why)
{
    throw Error(TIDAL_ERROR_OUT_OF_MEMORY, fmt::format("no pinned host home of {} bytes for elastic memory: {}", size, why),
                "free host memory, or discard what need not be kept (TIDAL_OFFLOAD_DISCARD)");
}
} // namespace

HostHome::HostHome(Runtime &runtime, size_t size) : runtime_(runtime), size_(size)
{
    if (runtime_.supports(RuntimeOp::host_register) && runtime_.supports(RuntimeOp::host_unregister)) {
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        data_ = static_cast<char *>(std::aligned_alloc(page, (size + page - 1) / page * page));
        if (!data_)
            no_home(size, "the host has no memory left");
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
        data_ = static_cast<char *>(runtime_.alloc(TIDAL_KIND_PINNED, 0, size));
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
    if (int rc = runtime_.free(TIDAL_KIND_PINNED, 0, data_, size_); rc != 0)
        log_error(fmt::format("freeing the {}-byte host home at {} failed: {} ({})", size_, static_cast<void *>(data_),
                              runtime_.native_name(rc), rc));
}

} // namespace tidal::elastic

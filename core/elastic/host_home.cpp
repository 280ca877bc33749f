#include "elastic/host_home.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cstdlib>

#include "log/logger.h"
#include "status/error.h"

namespace tidal::elastic {

constexpr size_t kHugePage = size_t{2} << 20;

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
        // Anonymous memory in huge pages where the kernel gives them: registering pins every
        // page, and 2 MiB pages are 512 times fewer to fault in and pin than 4 KiB ones.
        mapped_ = (size + kHugePage - 1) / kHugePage * kHugePage;
        void *m = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            no_home(size, "the host has no memory left");
        madvise(m, mapped_, MADV_HUGEPAGE); // a hint: without THP the home still works
        data_ = static_cast<char *>(m);
        try {
            runtime_.host_register(data_, size, "registering the host home");
        } catch (const Error &e) {
            munmap(data_, mapped_);
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
        munmap(data_, mapped_);
        return;
    }
    if (int rc = runtime_.free(TIDAL_KIND_PINNED, 0, data_, size_); rc != 0)
        log_error(fmt::format("freeing the {}-byte host home at {} failed: {} ({})", size_, static_cast<void *>(data_),
                              runtime_.native_name(rc), rc));
}

} // namespace tidal::elastic

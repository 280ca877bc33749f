#include "pool/runtime_block_source.h"

#include <fmt/format.h>

#include "log/logger.h"

namespace tidal::pool {

RuntimeBlockSource::RuntimeBlockSource(Runtime &runtime, tidal_kind kind, int32_t device) noexcept
    : runtime_(runtime), kind_(kind), device_(device)
{
}

// Runtime::alloc already throws the translated tidal::Error (OUT_OF_MEMORY for the vendor's
// out-of-memory codes), which is exactly what BlockSource promises.
void *RuntimeBlockSource::acquire(size_t bytes) { return runtime_.alloc(kind_, device_, bytes); }

std::exception_ptr RuntimeBlockSource::release(void *p, size_t bytes) noexcept
{
    const int rc = runtime_.free(kind_, device_, p, bytes);
    if (rc == 0)
        return nullptr;
    try {
        log_error(fmt::format("pool: returning {} bytes of {} memory at {} to the {} runtime failed: {} ({})", bytes,
                              tidal_kind_name(kind_), p, runtime_.name(), runtime_.native_name(rc), rc));
        runtime_.fail(rc, fmt::format("returning {} bytes of {} memory at {} from the pool (they stay reserved)",
                                      bytes, tidal_kind_name(kind_), p));
    } catch (...) {
        return std::current_exception();
    }
}

size_t RuntimeBlockSource::alignment() const noexcept { return TIDAL_RT_ALLOC_ALIGNMENT(kind_); }

} // namespace tidal::pool

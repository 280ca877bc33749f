// A BlockSource over the device runtime: memory of one kind on one device, straight from
// Runtime::alloc / Runtime::free. The device, pinned and managed pools are the same
// DevicePool over different instances of this adapter.
#pragma once

#include <cstdint>

#include "pool/block_source.h"
#include "runtime/runtime.h"

namespace tidal::pool {

class RuntimeBlockSource final : public BlockSource {
public:
    // `runtime` must outlive the source (and every pool over it).
    RuntimeBlockSource(Runtime &runtime, tidal_kind kind, int32_t device) noexcept;

    void *acquire(size_t bytes) override;
    // Logs a failure too: teardown has no caller to tell.
    std::exception_ptr release(void *p, size_t bytes) noexcept override;
    size_t alignment() const noexcept override;

    tidal_kind kind() const noexcept { return kind_; }
    int32_t device() const noexcept { return device_; }

private:
    Runtime &runtime_;
    tidal_kind kind_;
    int32_t device_;
};

} // namespace tidal::pool

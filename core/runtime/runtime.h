// The core's handle on one device runtime: the ops table, its instance, the module it came
// from (if any), and the device properties read once at start. Every call checks the native
// code and throws a translated tidal::Error, so the rest of the core never sees a native code.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/runtime_contract.h"
#include "plugin/shared_library.h"

namespace tidal {

enum class AdviceAction { set, unset };

class Runtime {
public:
    // Takes ownership of `instance` (destroyed through ops->destroy) and of `module`.
    Runtime(const tidal_rt_ops *ops, void *instance, std::string detail,
            std::optional<SharedLibrary> module = std::nullopt);
    ~Runtime();
    Runtime(const Runtime &) = delete;
    Runtime &operator=(const Runtime &) = delete;

    const char *name() const noexcept { return ops_->name; }
    const std::string &detail() const noexcept { return detail_; }
    tidal_rt_family family() const noexcept { return ops_->family; }
    const tidal_rt_ops &ops() const noexcept { return *ops_; }
    void *instance() const noexcept { return instance_; }

    int32_t device_count() const noexcept { return static_cast<int32_t>(props_.size()); }
    const tidal_rt_device_props &props(int32_t device) const { return props_.at(device); }
    // Throws TIDAL_ERROR_NOT_FOUND unless 0 <= device < device_count().
    void require_device(int32_t device) const;

    void *alloc(tidal_kind kind, int32_t device, size_t size);
    // Frees without throwing: teardown paths must go on. Returns the native code.
    int free(tidal_kind kind, int32_t device, void *ptr, size_t size) noexcept;
    // The runtime's own stream-ordered pool of device memory (alloc_async / free_async), where
    // the module has one; callers check has_stream_ordered_pool() first.
    bool has_stream_ordered_pool() const noexcept { return ops_->alloc_async && ops_->free_async; }
    void *alloc_async(int32_t device, size_t size, void *stream);
    int free_async(int32_t device, void *ptr, void *stream) noexcept;
    // That pool's trim and usage (pool_trim / pool_usage), where the module has them.
    bool can_trim_stream_ordered_pool() const noexcept
    {
        return has_stream_ordered_pool() && ops_->pool_trim && ops_->pool_usage;
    }
    void pool_trim(int32_t device, uint64_t keep);
    // Returns the native code; `reserved` and `used` are set only on success.
    int pool_usage(int32_t device, uint64_t *reserved, uint64_t *used) const noexcept;
    void advise(const void *ptr, size_t size, tidal_rt_advice advice, int32_t location);
    // The one translation of TIDAL_ADVICE_* bits into runtime advice: one call per bit, in the
    // order of the bits' values; `device` is the location of every bit but preferred-host.
    // Preferred device and preferred host are one runtime attribute, so unsetting either or
    // both is one call. No bits, no call (and no error from a runtime that takes no advice).
    // Throws at the first failing call: the bits after it are left as they were.
    void advise_bits(const void *ptr, size_t size, uint32_t bits, AdviceAction action, int32_t device);
    // The same for paths that must go on (frees, teardown): every bit is tried, and a runtime
    // that takes no advice is no failure. Returns the first failing call's native code, or 0.
    int advise_bits_noexcept(const void *ptr, size_t size, uint32_t bits, AdviceAction action,
                             int32_t device) noexcept;
    void mem_info(int32_t device, uint64_t *free_bytes, uint64_t *total_bytes);

    // The virtual-memory group (elastic memory). has_vmm() is false when the module lacks the
    // group; each call below then throws TIDAL_ERROR_NOT_SUPPORTED. A runtime that has the
    // group but answers its not-supported code on a device throws the same, translated.
    bool has_vmm() const noexcept;
    uint64_t vmm_granularity(int32_t device);
    void *vmm_reserve(int32_t device, size_t size);
    void vmm_map(void *ptr, size_t size, void *chunk);
    void vmm_set_access(int32_t device, void *ptr, size_t size);
    void *vmm_create(int32_t device, size_t size);
    void vmm_unmap(void *ptr, size_t size);
    // Release paths must go on: these return the native code.
    int vmm_destroy(void *chunk) noexcept;
    int vmm_release(void *ptr, size_t size) noexcept;

    // Throws the translated error for a non-zero native code. `what` describes the operation:
    // a string, or a callable returning one, called only on failure, so hot paths (copies,
    // prefetches, kernels) never format a message that is not needed.
    template <typename What> void check(int native, What &&what) const
    {
        if (native == 0) [[likely]]
            return;
        if constexpr (std::is_invocable_v<What>)
            fail(native, std::string(what()));
        else
            fail(native, std::string(what));
    }
    [[noreturn]] void fail(int native, const std::string &what) const;
    std::string native_name(int native) const;

private:
    const tidal_rt_ops *ops_;
    void *instance_;
    std::string detail_;
    std::optional<SharedLibrary> module_; // destroyed after the instance
    std::vector<tidal_rt_device_props> props_;
};

} // namespace tidal

// The pools of one context: one DevicePool per (kind, device), made on first use. The lookup
// on the allocation path is one atomic load; creation takes a mutex once per pool. With the
// vendor backend, device memory comes from one VendorPool per device instead (made up front:
// they hold nothing), and the other kinds from DevicePools as before.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "pool/device_pool.h"
#include "pool/runtime_block_source.h"
#include "pool/runtime_event_oracle.h"
#include "pool/vendor_pool.h"

namespace tidal::pool {

class PoolSet {
public:
    static constexpr int32_t kMaxDevices = 64;

    enum class Backend { tidal, vendor };

    // `events` (may be null: then pools refuse stream-ordered frees) must outlive the set.
    // Backend::vendor needs a runtime with a stream-ordered pool (the context checks first).
    PoolSet(Runtime &runtime, PoolSettings settings, EventPool *events = nullptr, Backend backend = Backend::tidal);
    ~PoolSet();
    PoolSet(const PoolSet &) = delete;
    PoolSet &operator=(const PoolSet &) = delete;

    bool enabled() const noexcept { return settings_.enabled; }
    // Kinds the pools serve: everything the runtime allocates slowly. Pageable memory comes
    // from the C library's allocator, which pools already.
    static bool poolable(tidal_kind kind) noexcept
    {
        return kind != TIDAL_KIND_PAGEABLE && kind != TIDAL_KIND_AUTO && kind != TIDAL_KIND_ELASTIC;
    }

    // Whether allocations of `kind` go to the runtime's stream-ordered pool (vendor()).
    bool vendor_serves(tidal_kind kind) const noexcept { return !vendor_.empty() && kind == TIDAL_KIND_DEVICE; }
    VendorPool &vendor(int32_t device) { return *vendor_.at(static_cast<size_t>(device)); }

    DevicePool &get(tidal_kind kind, int32_t device)
    {
        DevicePool *p = slot(kind, device).load(std::memory_order_acquire);
        return p ? *p : create(kind, device);
    }
    // The pool if it was ever used, else nullptr.
    const DevicePool *find(tidal_kind kind, int32_t device) const noexcept;
    // The counters of whichever pool serves (kind, device); all zero when it was never used.
    PoolStats stats(tidal_kind kind, int32_t device) const;
    // `stream` is about to be destroyed: every pool settles what it holds for it (see
    // DevicePool::end_stream). Throws the first pool's error, after asking every pool.
    void end_stream(void *stream);
    // Gives free memory of every pool back to the runtime; returns the bytes released. Every
    // pool is trimmed whatever another one met; `failure` gets the first error (memory the
    // runtime refused stays reserved, for the next trim).
    uint64_t trim(std::exception_ptr *failure);

private:
    struct Entry {
        std::unique_ptr<RuntimeBlockSource> source;
        std::unique_ptr<RuntimeEventOracle> oracle;
        std::unique_ptr<DevicePool> pool; // declared after source and oracle: destroyed first
    };
    std::atomic<DevicePool *> &slot(tidal_kind kind, int32_t device) noexcept
    {
        return slots_[static_cast<size_t>(kind) * kMaxDevices + static_cast<size_t>(device)];
    }
    DevicePool &create(tidal_kind kind, int32_t device);

    Runtime &runtime_;
    PoolSettings settings_;
    EventPool *events_;
    std::array<std::atomic<DevicePool *>, TIDAL_KIND_COUNT * kMaxDevices> slots_{};
    std::mutex mutex_;
    std::vector<Entry> entries_;
    std::vector<std::unique_ptr<VendorPool>> vendor_; // by device; empty for Backend::tidal
};

} // namespace tidal::pool

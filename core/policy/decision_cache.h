// Placements a policy marked TIDAL_PLACEMENT_CACHEABLE, remembered per thread so that the same
// request again skips the chain (plugin calls and validation) on the allocation fast path.
// Direct-mapped and thread-local: no lock, no sharing. Entries carry the owning context's
// generation, unique for the process's lifetime, so a new context at a freed one's address
// never sees its decisions. An entry also keeps what its owner derived from the decision the
// first time it served it (a Route: for tidal_alloc, the pool and alignment), so a hit goes
// straight there.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>

#include "policy/policy_chain.h"
#include "registry/allocation_record.h"

namespace tidal {

class DecisionCache {
public:
    // The request fields a decision depends on; `tag` is never NULL ("" when untagged).
    struct Key {
        size_t size = 0;
        size_t alignment = 0;
        tidal_kind kind = TIDAL_KIND_AUTO;
        int32_t device = 0;
        uint32_t hints = 0;
        const char *tag = "";
    };
    // Opaque to the cache: set by the owner after a decision served once; null until then.
    // For tidal_alloc, the pool and the record of the first allocation the decision served: a
    // repeat records the same but for its address, and copies it, where building one (zeroed,
    // then filled from the decision) was 40 of an alloc+free pair's 638 instructions.
    struct Route {
        void *target = nullptr;
        AllocationRecord record;
    };
    struct Hit {
        const Decision *decision;
        Route *route;
    };

    // A fresh generation for a new context.
    static uint64_t next_generation() noexcept;

    static Hit find(uint64_t generation, const Key &k) noexcept
    {
        Entry *slotted = slot(k);
        if (!slotted)
            return {nullptr, nullptr};
        Entry &e = *slotted;
        if (e.generation != generation || e.size != k.size || e.alignment != k.alignment || e.kind != k.kind ||
            e.device != k.device || e.hints != k.hints || e.tag[0] != k.tag[0] ||
            (k.tag[0] != '\0' && std::strcmp(e.tag, k.tag) != 0))
            return {nullptr, nullptr};
        return {&e.decision, &e.route};
    }

    // Returns the entry's route (cleared), or nullptr when the cache declined.
    static Route *store(uint64_t generation, const Key &k, const Decision &d) noexcept
    {
        const size_t n = std::strlen(k.tag);
        if (n >= sizeof(Entry::tag))
            return nullptr; // never the case for validated requests; a cache may always decline
        Entry *slotted = slot(k);
        if (!slotted)
            return nullptr;
        Entry &e = *slotted;
        e.generation = generation;
        e.size = k.size;
        e.alignment = k.alignment;
        e.kind = k.kind;
        e.device = k.device;
        e.hints = k.hints;
        std::memcpy(e.tag, k.tag, n + 1);
        e.decision = d;
        e.route = Route{};
        return &e.route;
    }

private:
    struct Entry {
        uint64_t generation = 0; // 0: empty
        size_t size = 0;
        size_t alignment = 0;
        tidal_kind kind = TIDAL_KIND_AUTO;
        int32_t device = 0;
        uint32_t hints = 0;
        char tag[TIDAL_TAG_MAX] = {};
        Decision decision;
        Route route;
    };
    static constexpr size_t kEntries = 64;

    // The table lives on the heap: the library's thread-locals use the initial-exec model (the
    // pool's fast path), whose static TLS space cannot hold kilobytes in a dlopen'ed library.
    // Reached through a trivially destructible initial-exec pointer: an owning thread_local
    // with a destructor needs a guard variable that costs a __tls_get_addr call on every
    // allocation. The owner (table()) is touched only when the table is made.
    static Entry *slot(const Key &k) noexcept
    {
        Entry *entries = entries_;
        if (!entries) [[unlikely]] {
            entries = table();
            if (!entries)
                return nullptr;
        }
        const uint64_t h = (static_cast<uint64_t>(k.size) * 0x9E3779B97F4A7C15ull) ^
                           (static_cast<uint64_t>(k.hints) << 7) ^ (static_cast<uint64_t>(k.kind) << 3) ^
                           static_cast<uint64_t>(static_cast<uint32_t>(k.device));
        return &entries[(h >> 58) & (kEntries - 1)];
    }
    // Makes the calling thread's table (nullptr: no memory, or the thread is exiting).
    static Entry *table() noexcept;

    [[gnu::tls_model("initial-exec")]] static inline thread_local Entry *entries_ = nullptr;
};

} // namespace tidal

// Placements a policy marked TIDAL_PLACEMENT_CACHEABLE, remembered per thread so that the same
// request again skips the chain (plugin calls and validation) on the allocation fast path.
// Direct-mapped and thread-local: no lock, no sharing. Entries carry the owning context's
// generation, unique for the process's lifetime, so a new context at a freed one's address
// never sees its decisions.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>

#include "policy/policy_chain.h"

namespace tidal {

class DecisionCache {
public:
    // A fresh generation for a new context.
    static uint64_t next_generation() noexcept;

    static const Decision *find(uint64_t generation, const tidal_place_request &r) noexcept
    {
        const Entry *slotted = slot(r);
        if (!slotted)
            return nullptr;
        const Entry &e = *slotted;
        if (e.generation != generation || e.size != r.size || e.alignment != r.alignment || e.kind != r.kind ||
            e.device != r.device || e.hints != r.hints || e.tag[0] != r.tag[0] ||
            (r.tag[0] != '\0' && std::strcmp(e.tag, r.tag) != 0))
            return nullptr;
        return &e.decision;
    }

    static void store(uint64_t generation, const tidal_place_request &r, const Decision &d) noexcept
    {
        const size_t n = std::strlen(r.tag);
        if (n >= sizeof(Entry::tag))
            return; // never the case for validated requests; a cache may always decline
        Entry *slotted = slot(r);
        if (!slotted)
            return;
        Entry &e = *slotted;
        e.generation = generation;
        e.size = r.size;
        e.alignment = r.alignment;
        e.kind = r.kind;
        e.device = r.device;
        e.hints = r.hints;
        std::memcpy(e.tag, r.tag, n + 1);
        e.decision = d;
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
    };
    static constexpr size_t kEntries = 64;

    // The table lives on the heap: the library's thread-locals use the initial-exec model (the
    // pool's fast path), whose static TLS space cannot hold kilobytes in a dlopen'ed library.
    // Reached through a trivially destructible initial-exec pointer: an owning thread_local
    // with a destructor needs a guard variable that costs a __tls_get_addr call on every
    // allocation. The owner (table()) is touched only when the table is made.
    static Entry *slot(const tidal_place_request &r) noexcept
    {
        Entry *entries = entries_;
        if (!entries) [[unlikely]] {
            entries = table();
            if (!entries)
                return nullptr;
        }
        const uint64_t h = (static_cast<uint64_t>(r.size) * 0x9E3779B97F4A7C15ull) ^
                           (static_cast<uint64_t>(r.hints) << 7) ^ (static_cast<uint64_t>(r.kind) << 3) ^
                           static_cast<uint64_t>(static_cast<uint32_t>(r.device));
        return &entries[(h >> 58) & (kEntries - 1)];
    }
    // Makes the calling thread's table (nullptr: no memory, or the thread is exiting).
    static Entry *table() noexcept;

    [[gnu::tls_model("initial-exec")]] static inline thread_local Entry *entries_ = nullptr;
};

} // namespace tidal

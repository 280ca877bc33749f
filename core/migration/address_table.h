// A hash table from an address to a small value, stored flat: one probe reads one cache line
// of slots, where a std::map search read a node per level (13 levels at 10^4 units, most of
// them missing the cache) and a std::unordered_map a bucket and then a node it had allocated.
// The scheduler finds its units by start address through one (issue 15), and a declaration's
// plan remembers the units it has named in another.
//
// Open addressing with linear probing, at most half full; erase shifts the probe chain back,
// so there are no tombstones and a lookup stops at the first empty slot. Address 0 is the
// empty slot's key: it is never the start of an allocation, a unit or a chunk.
//
// Not thread-safe (the scheduler's lock guards it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tidal {

template <class V>
class AddressTable {
public:
    // The value stored for `key`, or nullptr. Valid until the next insertion or erase.
    V *find(uintptr_t key) noexcept
    {
        if (used_ == 0)
            return nullptr;
        for (size_t i = home(key);; i = (i + 1) & mask()) {
            if (slots_[i].key == key)
                return &slots_[i].value;
            if (slots_[i].key == 0)
                return nullptr;
        }
    }
    const V *find(uintptr_t key) const noexcept { return const_cast<AddressTable *>(this)->find(key); }
    // Starts loading the slot `key` would be found at: a caller that knows its next keys ahead
    // overlaps their cache misses (a hint: nothing is read).
    void prefetch(uintptr_t key) const noexcept
    {
        if (used_ != 0)
            __builtin_prefetch(&slots_[home(key)]);
    }

    // Stores `value` for `key` unless a value is there already; returns the stored one and
    // whether it was inserted. `key` must not be 0.
    std::pair<V *, bool> try_emplace(uintptr_t key, V value)
    {
        if ((used_ + 1) * 2 > slots_.size())
            grow();
        size_t i = home(key);
        for (; slots_[i].key != 0; i = (i + 1) & mask())
            if (slots_[i].key == key)
                return {&slots_[i].value, false};
        slots_[i] = Slot{key, std::move(value)};
        ++used_;
        return {&slots_[i].value, true};
    }

    void erase(uintptr_t key) noexcept
    {
        if (used_ == 0)
            return;
        size_t i = home(key);
        for (; slots_[i].key != key; i = (i + 1) & mask())
            if (slots_[i].key == 0)
                return;
        // Entries after the hole whose home is not between the hole and them move into it, so
        // every entry stays reachable from its home without crossing an empty slot.
        for (size_t j = (i + 1) & mask(); slots_[j].key != 0; j = (j + 1) & mask()) {
            const size_t h = home(slots_[j].key);
            const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
            if (!stays) {
                slots_[i] = std::move(slots_[j]);
                i = j;
            }
        }
        slots_[i] = Slot{};
        --used_;
    }

    // Empties the table and keeps its slots (a plan reused call after call allocates nothing),
    // unless they are four times what its entries needed: a small call after a large one
    // would otherwise wipe the large one's slots every time.
    void clear() noexcept
    {
        if (used_ == 0)
            return;
        if (slots_.size() > 64 && used_ * 4 < slots_.size()) {
            slots_ = std::vector<Slot>();
            shift_ = 64;
        } else {
            for (Slot &s : slots_)
                s = Slot{};
        }
        used_ = 0;
    }
    size_t size() const noexcept { return used_; }

private:
    struct Slot {
        uintptr_t key = 0;
        V value{};
    };

    size_t mask() const noexcept { return slots_.size() - 1; }
    // Fibonacci hashing: the product's high bits mix the page and chunk bits of aligned addresses.
    size_t home(uintptr_t key) const noexcept
    {
        return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    void grow()
    {
        std::vector<Slot> old = std::move(slots_);
        const size_t capacity = old.empty() ? 16 : old.size() * 2;
        slots_.assign(capacity, Slot{});
        shift_ = 64;
        for (size_t c = capacity; c > 1; c >>= 1)
            --shift_;
        used_ = 0;
        for (Slot &s : old)
            if (s.key != 0)
                try_emplace(s.key, std::move(s.value));
    }

    std::vector<Slot> slots_;
    size_t used_ = 0;
    unsigned shift_ = 64;
};

} // namespace tidal

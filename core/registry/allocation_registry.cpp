#include "registry/allocation_registry.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>

#include "status/error.h"

namespace tidal {
namespace {
uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }
} // namespace

static_assert(sizeof(uintptr_t) == 8, "the shard hash assumes 64-bit addresses");

void AllocationRegistry::fill_head(HintHead &h, const Slot &slot) noexcept
{
#if defined(__GLIBCXX__)
    // The node Slot is ordered for (libstdc++'s map node: its links, the key, the slot last).
    // Were it otherwise, a lookup under the lock would read two lines of each candidate node
    // where it reads one, and nothing else would change: this keeps that from passing unseen.
    using Node = std::_Rb_tree_node<SlotMap::value_type>;
    constexpr size_t head_at = sizeof(Node) - sizeof(Slot) + offsetof(Slot, record) + kHeadFrom;
    static_assert(sizeof(Node) % NodeArena::kAlign == 0 && NodeArena::kAlign % 64 == 0 && sizeof(Node) - head_at == 64,
                  "a record's head and the slot's flags fill the node's last line");
#endif
    static_assert(sizeof(Index::Hint) == 64);
    std::memcpy(h.record, reinterpret_cast<const char *>(&slot.record) + kHeadFrom, kHeadBytes);
    h.tagged = slot.tagged;
}

// Hints copy a record, so every change of it passes here: a new slot names itself in every page
// it covers (add_node), a revived one in its first page (the others are repaired by the lookups
// that need them), a slot freed clears the hints naming it, and advice rewrites them. A block in
// one page (a pooled block of up to 4 KiB) is the free's and the revival's usual case and is
// inline there: a shift and a mask to its page's hints, one line written. A larger block's
// `hinted` pages say where its hints may be: a free of a 1 MiB block looks at its first page,
// not sixteen.
inline void AllocationRegistry::hint_revived(uintptr_t base, Slot &slot) noexcept
{
    // In one page below kLimit is indexable: it ends at or before the page's end. (Written out
    // here and in unhint: a helper for it cost the pair 3 instructions, callgrind.)
    if (base < Index::kLimit && Index::one_page(base, slot.record.size)) [[likely]] {
        if (Index::Hint *hints = index_.page_hints(base))
            Index::push_hint(hints, &slot, head_of(slot));
        return;
    }
    hint_revived_pages(base, slot);
}

inline void AllocationRegistry::unhint(uintptr_t base, Slot &slot) noexcept
{
    if (base < Index::kLimit && Index::one_page(base, slot.record.size)) [[likely]] {
        if (Index::Hint *hints = index_.page_hints(base))
            Index::clear_hints(hints, &slot);
        return;
    }
    unhint_pages(base, slot);
}

// Out of line, so that the one-page paths above save no registers for them: a block over more
// than one page names itself in its first page, and keeps in `hinted` where its hints may be.
// The mask may hold pages of an earlier life too (a one-page life leaves its bits): one more
// page looked at, nothing missed, as every life ends with no hint naming the slot.
[[gnu::noinline]] void AllocationRegistry::hint_revived_pages(uintptr_t base, Slot &slot) noexcept
{
    if (!Index::indexable(base, slot.record.size))
        return;
    if (Index::Hint *hints = index_.page_hints(base)) {
        Index::push_hint(hints, &slot, head_of(slot));
        slot.hinted = static_cast<uint16_t>(1u << Index::page_of(base));
    }
}

[[gnu::noinline]] void AllocationRegistry::unhint_pages(uintptr_t base, Slot &slot) noexcept
{
    if (Index::indexable(base, slot.record.size))
        index_.each_page(base, slot.hinted, [&slot](Index::Hint *hints) { Index::clear_hints(hints, &slot); });
    slot.hinted = 0;
}

void AllocationRegistry::insert_at(const AllocationRecord &record, void *raw, void *at)
{
    const uintptr_t base = addr(at);
    const uintptr_t end = base + record.size;
    Shard &s = shards_[shard_of(base)];
    std::lock_guard lock(s.mutex);
    // The block freed last at this base, coming back (what a pool does): nothing dead can lie
    // inside its range, and nothing live before it may reach in. Checked once, then again only
    // once the shard's nodes changed or it comes back larger: its neighbours were calls into the
    // tree, 23 of a 4 KiB pair's 661 instructions at 10^3 live (callgrind), more with more.
    if (const auto hint = s.index[Shard::index_of(base)];
        hint != s.slots.end() && hint->first == base && !hint->second.live) {
        if ((hint->second.checked == s.changes && record.size <= hint->second.record.size) || s.room(hint, end)) {
            const size_t old_size = hint->second.record.size;
            hint->second.hold(record, raw, at);
            hint->second.checked = s.changes;
            --s.dead;
            ++s.live;
            hint_revived(base, hint->second); // its hints were cleared when it was freed
            // Spanning granules, its covers may be gone: an allocation made inside its range while
            // it was dead (in another shard, so not seen above) wrote its own. Unless no covers
            // were written since its own and the size is the same: a large block a pool hands out
            // again and again then costs no rewrite (600 ns for 16 MiB on the H200).
            if ((base ^ (end - 1)) >> Index::kGranuleBits) [[unlikely]]
                if (old_size != record.size ||
                    hint->second.covered_at != covers_written_.load(std::memory_order_acquire))
                    hint->second.covered_at = index_spans(base, record.size);
            return;
        }
    }
    if (raw == record.raw && at == record.base) [[likely]] {
        insert_new(s, record);
        return;
    }
    AllocationRecord r = record;
    r.raw = raw;
    r.base = at;
    insert_new(s, r);
}

// Out of line, so that the revival above saves no registers for it.
[[gnu::noinline]] void AllocationRegistry::insert_new(Shard &s, const AllocationRecord &record)
{
    const uintptr_t base = addr(record.base);
    const uintptr_t end = base + record.size;
    auto it = s.slots.lower_bound(base);
    bool overlaps = it != s.slots.begin() && Shard::reaches(*std::prev(it), base);
    auto revived = s.slots.end();
    while (!overlaps && it != s.slots.end() && it->first < end) {
        if (it->second.live) {
            overlaps = true;
        } else if (it->first == base) {
            revived = it++;
        } else { // a dead node inside the new range would hide it from interior lookups
            it = erase_node(s, it);
            --s.dead;
        }
    }
    if (overlaps)
        throw Error(TIDAL_ERROR_INTERNAL, "the runtime returned memory overlapping a live allocation",
                    "this is a bug in tidal or the device runtime; please report it");
    if (revived != s.slots.end()) {
        revived->second.hold(record, record.raw, record.base);
        --s.dead;
        hint_revived(base, revived->second);
        if (Index::spans(base, record.size))
            revived->second.covered_at = index_spans(base, record.size);
    } else {
        revived = add_node(s, it, record);
    }
    s.changed(); // erased nodes or a new one (kept simple: this is not the fast path)
    revived->second.checked = s.changes;
    s.remember(revived);
    ++s.live;
}

AllocationRegistry::SlotMap::iterator AllocationRegistry::add_node(Shard &s, SlotMap::iterator hint,
                                                                   const AllocationRecord &record)
{
    const uintptr_t base = addr(record.base);
    if (!Index::indexable(base, record.size)) {
        unindexed_.store(true, std::memory_order_relaxed);
        return s.slots.emplace_hint(hint, base, Slot(record));
    }
    Index::Bucket &bucket = index_.bucket(base);
    bucket.reserve(bucket.size() + 1); // the throwing steps first: nothing has changed yet
    const auto it = s.slots.emplace_hint(hint, base, Slot(record));
    bucket.insert(std::lower_bound(bucket.begin(), bucket.end(), base,
                                   [](const Index::Member &m, uintptr_t b) { return m.base < b; }),
                  Index::Member{base, &it->second});
    index_.hint(base, record.size, &it->second, head_of(it->second)); // every page it covers
    it->second.hinted = static_cast<uint16_t>(Index::pages_of(base, record.size));
    if (Index::spans(base, record.size))
        it->second.covered_at = index_spans(base, record.size);
    return it;
}

[[gnu::noinline]] uint64_t AllocationRegistry::index_spans(uintptr_t base, size_t size)
{
    // Counted before writing: a revival that reads the count after this sees it moved.
    const uint64_t at = covers_written_.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (Index::indexable(base, size))
        index_.cover(base, size);
    else
        unindexed_.store(true, std::memory_order_relaxed);
    return at;
}

AllocationRegistry::SlotMap::iterator AllocationRegistry::erase_node(Shard &s, SlotMap::iterator it)
{
    const uintptr_t base = it->first;
    if (SlotMap::iterator &hint = s.index[Shard::index_of(base)]; hint == it)
        hint = s.slots.end();
    index_.forget_hints(base, &it->second);
    if (Index::Bucket *bucket = index_.find_bucket(base)) {
        const auto at = std::lower_bound(bucket->begin(), bucket->end(), base,
                                         [](const Index::Member &m, uintptr_t b) { return m.base < b; });
        if (at != bucket->end() && at->base == base)
            bucket->erase(at);
        if (Index::spans(base, it->second.record.size) && Index::indexable(base, it->second.record.size))
            index_.uncover(base, it->second.record.size); // stale covers are only extra checks
    }
    s.changed();
    return s.slots.erase(it);
}

[[gnu::noinline]] bool AllocationRegistry::Shard::room(SlotMap::const_iterator it, uintptr_t end) const noexcept
{
    if (const auto next = std::next(it); next != slots.end() && next->first < end)
        return false;
    return it == slots.begin() || !reaches(*std::prev(it), it->first);
}

std::optional<AllocationRecord> AllocationRegistry::scan_shards(uintptr_t a, Vacancy *vacancy) const
{
    Vacancy around{0, UINTPTR_MAX};
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        auto it = s.slots.upper_bound(a);
        // The vacancy ends at the next live allocation: copies refuse a range that runs into
        // one, so a dead node (a freed base kept for revival) must not end it.
        auto next = it;
        while (next != s.slots.end() && !next->second.live)
            ++next;
        if (next != s.slots.end())
            around.end = std::min(around.end, next->first);
        if (it == s.slots.begin())
            continue;
        --it;
        if (!it->second.live) { // nothing live of this shard reaches past a dead node's base
            around.begin = std::max(around.begin, it->first);
            continue;
        }
        if (it->second.record.contains(reinterpret_cast<const void *>(a)))
            return it->second.record;
        around.begin = std::max(around.begin, it->first + it->second.record.size);
    }
    if (vacancy)
        *vacancy = around;
    return std::nullopt;
}

namespace {
template <typename Bucket> auto first_above(const Bucket &bucket, uintptr_t a)
{
    return std::upper_bound(bucket.begin(), bucket.end(), a, [](uintptr_t x, const auto &m) { return x < m.base; });
}
} // namespace

// Under the lock of a's shard: the page hint, then a's bucket. A live base at or below `a` in
// the granule settles it (live allocations never overlap, so nothing from further below reaches
// past it); dead ones are stepped over. What the bucket finds becomes the page's hint.
AllocationRegistry::Answer AllocationRegistry::lookup(uintptr_t a, AllocationRecord *out, Vacancy *around,
                                                      bool want_end) const
{
    const Shard &s = shards_[shard_of(a)];
    std::lock_guard lock(s.mutex);
    Index::Hint *hints = index_.page_hints(a);
    if (!hints)
        return Answer::unknown;
    for (const Index::Hint &h : std::span(hints, Index::kHints))
        if (const Slot *hint = h.item; hint && hint->live && hint->record.contains(reinterpret_cast<const void *>(a))) {
            *out = hint->record; // the common case: a page queried before
            return Answer::found;
        }
    const Index::Bucket *in = index_.find_bucket(a);
    if (!in)
        return Answer::unknown;
    const Index::Bucket &bucket = *in;
    const auto above = first_above(bucket, a);
    for (auto next = above; want_end && next != bucket.end(); ++next)
        if (next->item->live) {
            around->end = next->base; // exact: every base between is in this bucket
            break;
        }
    for (auto below = above; below != bucket.begin();) {
        Slot &slot = *(--below)->item;
        if (!slot.live)
            continue;
        if (slot.record.contains(reinterpret_cast<const void *>(a))) {
            Index::push_hint(hints, &slot, head_of(slot)); // written under the granule's shard lock, as the bucket is
            slot.hinted |= static_cast<uint16_t>(1u << Index::page_of(a));
            *out = slot.record;
            return Answer::found;
        }
        around->begin = below->base + slot.record.size;
        return Answer::absent;
    }
    return Answer::unknown;
}

// A base named by a cover, checked under its own shard's lock: found when it is live and
// contains `a`; a live one that ends at or below `a` bounds the vacancy.
AllocationRegistry::Answer AllocationRegistry::check_cover(uintptr_t c, uintptr_t a, AllocationRecord *out,
                                                           uintptr_t *begin) const
{
    const Shard &s = shards_[shard_of(c)];
    std::lock_guard lock(s.mutex);
    const Index::Bucket *bucket = index_.find_bucket(c);
    if (!bucket)
        return Answer::unknown;
    const auto at = first_above(*bucket, c);
    if (at == bucket->begin() || at[-1].base != c || !at[-1].item->live)
        return Answer::unknown;
    const AllocationRecord &r = at[-1].item->record;
    if (r.contains(reinterpret_cast<const void *>(a))) {
        *out = r;
        return Answer::found;
    }
    if (c < a && c + r.size <= a)
        *begin = std::max(*begin, c + r.size);
    return Answer::absent;
}

// Not instrumented by ThreadSanitizer: the loads below race with writers of the shard by design
// (a sequence-lock read), and what they read is used only once read_valid() says no writer came
// by. The hint's item is a volatile load, so that it is read exactly once (a compiler may read a
// plain pointer twice and see two values), and so are the base and size a hint is chosen by;
// the head (and the node's part asked for) is copied as plain bytes (vector moves: a word-by-word
// volatile copy cost 100 more instructions per query) and looked at only after the check. Out
// of line: the attribute must not be inlined away.
template <AllocationRegistry::Part P>
[[gnu::noinline, gnu::no_sanitize("thread")]] bool AllocationRegistry::read_hinted(uintptr_t a,
                                                                                 AllocationRecord *out) const noexcept
{
    const Shard &s = shards_[shard_of(a)];
    const uint64_t seq = s.mutex.read_begin();
    if (ShardLock::writing(seq))
        return false;
    const Index::Hint *hints = index_.page_hints(a);
    if (!hints)
        return false;
    // Blocks smaller than a page share its hints, which name two of them: for the others, the
    // bucket answers (under the lock) without this reader copying a head it cannot use.
    constexpr size_t kBase = offsetof(AllocationRecord, base) - kHeadFrom, kSize = offsetof(AllocationRecord, size) - kHeadFrom;
    const Index::Hint *hint = nullptr;
    const Slot *item = nullptr;
    for (const Index::Hint &h : std::span(hints, Index::kHints)) {
        const Slot *candidate = *static_cast<const Slot *const volatile *>(&h.item);
        if (!candidate)
            continue;
        const auto base = *reinterpret_cast<const volatile uintptr_t *>(h.head.record + kBase);
        if (a - base < *reinterpret_cast<const volatile size_t *>(h.head.record + kSize)) {
            hint = &h;
            item = candidate;
            break;
        }
    }
    if (!hint)
        return false;
    // The node stays a node of this registry's arena whatever happened to it since (nodes are
    // never given back), so the loads of it below read mapped memory even when the hint is stale.
    static_assert(std::is_trivially_copyable_v<AllocationRecord>);
    if constexpr (P == Part::all)
        std::memcpy(static_cast<void *>(out), &item->record, kHeadFrom); // raw, raw_size, the tag
    std::memcpy(reinterpret_cast<char *>(out) + kHeadFrom, hint->head.record, kHeadBytes);
    if constexpr (P == Part::described) {
        if (*reinterpret_cast<const volatile bool *>(&hint->head.tagged))
            std::memcpy(out->tag, item->record.tag, sizeof out->tag);
        else
            std::memset(out->tag, 0, sizeof out->tag);
    }
    return s.mutex.read_valid(seq) && out->contains(reinterpret_cast<const void *>(a));
}

template bool AllocationRegistry::read_hinted<AllocationRegistry::Part::all>(uintptr_t, AllocationRecord *) const noexcept;
template bool AllocationRegistry::read_hinted<AllocationRegistry::Part::head>(uintptr_t, AllocationRecord *) const noexcept;
template bool AllocationRegistry::read_hinted<AllocationRegistry::Part::described>(uintptr_t, AllocationRecord *) const noexcept;

bool AllocationRegistry::find_locked(uintptr_t a, AllocationRecord &r, Vacancy *vacancy) const
{
    if (unindexed_.load(std::memory_order_relaxed) || a >= Index::kLimit) [[unlikely]]
        return scan_into(a, r, vacancy);
    Vacancy around{(a >> Index::kGranuleBits) << Index::kGranuleBits, 0};
    switch (lookup(a, &r, &around, vacancy != nullptr)) {
    case Answer::found: return true;
    case Answer::absent: break;
    case Answer::unknown: {
        // Nothing live at or below `a` in its granule: what contains `a`, if anything, reaches
        // in from below and is named by one of a's covers (the last one written for each block).
        const auto covers = index_.covers(a);
        for (size_t i = 0; i < covers.size(); ++i) {
            const uintptr_t c = covers[i];
            if (c == 0 || c > a || std::find(covers.begin(), covers.begin() + i, c) != covers.begin() + i)
                continue;
            if (check_cover(c, a, &r, &around.begin) == Answer::found)
                return true;
        }
        break;
    }
    }
    if (vacancy) {
        if (around.end == 0) // no live base above `a` in its granule: the next one may be anywhere
            return scan_into(a, r, vacancy);
        *vacancy = around;
    }
    return false;
}

bool AllocationRegistry::scan_into(uintptr_t a, AllocationRecord &r, Vacancy *vacancy) const
{
    auto found = scan_shards(a, vacancy);
    if (found)
        r = *found;
    return found.has_value();
}

std::optional<AllocationRecord> AllocationRegistry::find(const void *p, Vacancy *vacancy) const
{
    AllocationRecord r;
    if (locate<Part::all>(addr(p), r, vacancy))
        return r;
    return std::nullopt;
}


bool AllocationRegistry::set_advice(const void *base, uint32_t advice)
{
    const uintptr_t a = addr(base);
    Shard &s = shards_[shard_of(a)];
    std::lock_guard lock(s.mutex);
    auto it = s.exact(a);
    if (it == s.slots.end() || !it->second.live)
        return false;
    it->second.record.advice = advice;
    if (Index::indexable(a, it->second.record.size)) // the copies of its head
        index_.each_hint(a, it->second.record.size, &it->second,
                         [&it](Index::Hint &h) { fill_head(h.head, it->second); });
    return true;
}

AllocationRegistry::Removed AllocationRegistry::remove(const void *p)
{
    const uintptr_t a = addr(p);
    Shard &s = shards_[shard_of(a)];
    {
        std::lock_guard lock(s.mutex);
        if (auto it = s.exact(a); it != s.slots.end() && it->second.live) {
            // Dead nodes outnumbering live ones once this free is done (dead + 1 against live - 1):
            // purged before this node dies, so that the purge leaves it to be copied out below.
            if (s.dead + 1 > kDeadSlack && s.dead + 1 > s.live - 1) [[unlikely]]
                purge_dead(s);
            it->second.live = false;
            unhint(a, it->second);
            --s.live;
            ++s.dead;
            s.freed[s.freed_next++ % kFreedMemory] = a;
            return {Removal::removed, it->second.record};
        }
    }
    return remove_other(s, a);
}

// Out of line, so that the free above saves no registers for it.
[[gnu::noinline]] AllocationRegistry::Removed AllocationRegistry::remove_other(Shard &s, uintptr_t a)
{
    if (AllocationRecord r; locate<Part::all>(a, r, nullptr))
        return {Removal::interior, r};
    std::lock_guard lock(s.mutex);
    return {s.was_freed(a) ? Removal::already_freed : Removal::unknown, {}};
}

std::vector<AllocationRecord> AllocationRegistry::drain()
{
    std::vector<AllocationRecord> all;
    for (Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        for (auto &[base, slot] : s.slots) {
            if (slot.live)
                all.push_back(slot.record);
            index_.forget_hints(base, &slot);
            if (Index::Bucket *bucket = index_.find_bucket(base))
                bucket->clear(); // the granule's nodes are all this shard's
        }
        s.slots.clear();
        s.index.fill(s.slots.end());
        s.live = s.dead = 0;
    }
    return all;
}

std::vector<AllocationRecord> AllocationRegistry::live() const
{
    std::vector<AllocationRecord> all;
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        for (const auto &[base, slot] : s.slots)
            if (slot.live)
                all.push_back(slot.record);
    }
    return all;
}

size_t AllocationRegistry::live_count() const
{
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        n += s.live;
    }
    return n;
}

void AllocationRegistry::purge_dead(Shard &s)
{
    for (auto it = s.slots.begin(); it != s.slots.end();)
        it = it->second.live ? std::next(it) : erase_node(s, it);
    s.index.fill(s.slots.end());
    s.dead = 0;
}

bool AllocationRegistry::Shard::was_freed(uintptr_t base) const noexcept
{
    for (uintptr_t f : freed)
        if (f == base && base != 0)
            return true;
    return false;
}

} // namespace tidal

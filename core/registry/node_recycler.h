// An allocator for the registry's map nodes that keeps freed nodes on a free list instead of
// returning them to the heap: every allocation inserts one node and every free removes one,
// and the global heap's malloc+free pair was a third of the cost of tidal_alloc+tidal_free.
// Not thread-safe by itself: each registry shard uses its own list under its own mutex.
#pragma once

#include <cstddef>
#include <new>

#include "registry/node_arena.h"

namespace tidal {

class NodeFreeList {
public:
    // Nodes taken from the arena at once. Small: 64 shards each holding a batch of which only
    // the start is used cost resident pages (32 x 256 bytes: +220 bytes per live allocation at 10^3).
    static constexpr size_t kBatch = 4;

    NodeFreeList() = default;
    NodeFreeList(const NodeFreeList &) = delete;
    NodeFreeList &operator=(const NodeFreeList &) = delete;
    ~NodeFreeList()
    {
        if (arena_)
            return; // the arena's chunks hold every block
        while (head_) {
            Link *next = head_->next;
            ::operator delete(head_);
            head_ = next;
        }
    }
    // Before the first node: blocks come from `arena` from then on, which outlives this list.
    void attach(NodeArena *arena) noexcept { arena_ = arena; }
    void *pop(size_t bytes)
    {
        if (head_) {
            Link *l = head_;
            head_ = l->next;
            return l;
        }
        if (!arena_)
            return ::operator new(bytes);
        // Blocks of the batch are handed out in order, not pushed on the list: a block nobody
        // has used yet stays untouched (no resident page for a shard that needs few).
        if (fresh_left_ == 0)
            fresh_ = static_cast<char *>(arena_->take(bytes, kBatch, &fresh_left_));
        void *p = fresh_;
        fresh_ += NodeArena::block_size(bytes);
        --fresh_left_;
        return p;
    }
    void push(void *p) noexcept { head_ = new (p) Link{head_}; }

private:
    struct Link {
        Link *next;
    };
    Link *head_ = nullptr;
    NodeArena *arena_ = nullptr;
    char *fresh_ = nullptr; // the rest of the last batch
    size_t fresh_left_ = 0;
};

// std::map allocates only its node type one at a time, so every block on a list has one size.
template <typename T> class NodeRecycler {
public:
    using value_type = T;
    explicit NodeRecycler(NodeFreeList *list) noexcept : list_(list) {}
    template <typename U> NodeRecycler(const NodeRecycler<U> &other) noexcept : list_(other.list()) {}

    T *allocate(size_t n)
    {
        static_assert(sizeof(T) >= sizeof(void *));
        return static_cast<T *>(n == 1 ? list_->pop(sizeof(T)) : ::operator new(n * sizeof(T)));
    }
    void deallocate(T *p, size_t n) noexcept
    {
        if (n == 1)
            list_->push(p);
        else
            ::operator delete(p);
    }
    NodeFreeList *list() const noexcept { return list_; }
    template <typename U> bool operator==(const NodeRecycler<U> &o) const noexcept { return list_ == o.list(); }

private:
    NodeFreeList *list_;
};

} // namespace tidal

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
    static constexpr size_t kBatch = 32; // nodes taken from the arena at once

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
        if (!head_) {
            if (!arena_)
                return ::operator new(bytes);
            size_t got = 0;
            char *first = static_cast<char *>(arena_->take(bytes, kBatch, &got));
            for (size_t i = got; i-- > 1;)
                push(first + i * NodeArena::block_size(bytes));
            return first;
        }
        Link *l = head_;
        head_ = l->next;
        return l;
    }
    void push(void *p) noexcept { head_ = new (p) Link{head_}; }

private:
    struct Link {
        Link *next;
    };
    Link *head_ = nullptr;
    NodeArena *arena_ = nullptr;
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

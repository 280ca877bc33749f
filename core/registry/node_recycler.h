// An allocator for the registry's map nodes that keeps freed nodes on a free list instead of
// returning them to the heap: every allocation inserts one node and every free removes one,
// and the global heap's malloc+free pair was a third of the cost of tidal_alloc+tidal_free.
// Not thread-safe by itself: each registry shard uses its own list under its own mutex.
#pragma once

#include <cstddef>
#include <new>

namespace tidal {

class NodeFreeList {
public:
    NodeFreeList() = default;
    NodeFreeList(const NodeFreeList &) = delete;
    NodeFreeList &operator=(const NodeFreeList &) = delete;
    ~NodeFreeList()
    {
        while (head_) {
            Link *next = head_->next;
            ::operator delete(head_);
            head_ = next;
        }
    }
    void *pop(size_t bytes)
    {
        if (!head_)
            return ::operator new(bytes);
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

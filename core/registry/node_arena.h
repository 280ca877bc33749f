// Where the registry's map nodes live: carved from chunks that all shards of one registry share.
// An interior query's last step reads one node among all live ones (10^6 live allocations:
// ~200 MB of nodes); on 4 KiB pages that step was a TLB miss as well as a cache miss. Chunks
// grow from 16 KiB to 2 MiB; the 2 MiB ones are mapped at 2 MiB boundaries (huge_pages.h) and
// advised as transparent huge pages once 8 MiB of nodes exist (~40 000): then the full chunks
// before are collapsed into huge pages too, so only the first ~2 MiB of nodes stay on small
// pages. A huge page is resident whole once touched, so a program with few allocations keeps
// a small footprint.
// Nodes are handed to a shard's free list in batches and never come back; the chunks are freed
// with the arena, after every shard (the registry declares it first).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "registry/huge_pages.h"
#include "sync/spin_lock.h"

namespace tidal {

class NodeArena {
public:
    // A cache line: a map node then starts a line, and AllocationRegistry::Slot puts what a
    // query reads in the node's last one (192-byte nodes, where 16-byte blocks made them 208).
    static constexpr size_t kAlign = 64;
    static constexpr size_t kHuge = HugePages::kHuge;
    static constexpr size_t kHugeAfter = size_t{8} << 20; // bytes of chunks before huge pages are asked for

    // Where the kernel is asked for huge pages: tests hand in a refusing stand-in.
    explicit NodeArena(HugePages::Advise advise = &::madvise) : advise_(advise) {}
    NodeArena(const NodeArena &) = delete;
    NodeArena &operator=(const NodeArena &) = delete;
    ~NodeArena()
    {
        for (const Chunk &c : chunks_)
            if (c.mapped)
                HugePages::unmap(c.start, c.size);
            else
                std::free(c.start);
    }

    static size_t block_size(size_t bytes) noexcept { return (bytes + kAlign - 1) / kAlign * kAlign; }

    // Up to `count` consecutive blocks of block_size(bytes) (at least one): the first, and how many in `got`.
    void *take(size_t bytes, size_t count, size_t *got)
    {
        const size_t block = block_size(bytes);
        std::lock_guard lock(mutex_);
        if (left_ < block)
            grow(block * count); // what is left of the old chunk (less than one block) stays unused
        const size_t n = std::min(count, left_ / block);
        void *first = next_;
        next_ += n * block;
        left_ -= n * block;
        *got = n;
        return first;
    }

    // Whether huge pages were asked for and the kernel took the advice (tests, benchmarks).
    bool huge() const noexcept { return huge_; }

private:
    struct Chunk {
        void *start;
        size_t size;
        bool mapped; // HugePages::map'd (2 MiB or more), else malloc'd
    };

    void grow(size_t at_least)
    {
        const size_t size = std::max(next_size_, (at_least + kAlign - 1) / kAlign * kAlign);
        chunks_.reserve(chunks_.size() + 1); // the throwing step first
        const bool mapped = size >= kHuge;
        void *c = mapped ? HugePages::map(size) : std::aligned_alloc(kAlign, size);
        if (!c)
            throw std::bad_alloc();
        chunks_.push_back(Chunk{c, size, mapped});
        next_ = static_cast<char *>(c);
        left_ = size;
        total_ += size;
        next_size_ = std::min(next_size_ * 2, kHuge);
        if (advised_) {
            if (mapped) // filled from now on
                huge_ = HugePages::advise(c, HugePages::round_up(size), advise_) || huge_;
        } else if (total_ >= kHugeAfter) {
            // Enough nodes to fill huge pages: the mapped chunks so far (full, but for this
            // one) are collapsed, so the earlier nodes are not left on small pages.
            advised_ = true;
            for (const Chunk &k : chunks_)
                if (k.mapped)
                    huge_ = HugePages::advise(k.start, HugePages::round_up(k.size), advise_) || huge_;
        }
    }

    SpinLock mutex_; // taken once per batch of nodes, by the shard that ran out
    HugePages::Advise advise_;
    std::vector<Chunk> chunks_;
    char *next_ = nullptr;
    size_t left_ = 0;
    size_t total_ = 0;
    size_t next_size_ = size_t{16} << 10;
    bool advised_ = false; // total_ reached kHugeAfter
    bool huge_ = false;
};

} // namespace tidal

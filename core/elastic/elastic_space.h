// Every elastic allocation of one context (TIDAL_KIND_ELASTIC): fixed addresses reserved with
// the runtime's virtual-memory group, whose physical chunks are unmapped on an offload (their
// contents copied to a pinned host home, or dropped) and mapped again on a restore. It reaches
// the runtime's virtual memory only through Runtime's vmm_* methods. One lock guards it all:
// offloads and restores are rare, large operations.
#pragma once

#include <atomic>
#include <exception>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "config/settings.h"
#include "copy/copy_engine.h"
#include "elastic/chunk_pool.h"
#include "elastic/elastic_allocation.h"
#include "runtime/runtime.h"

namespace tidal::elastic {

// The bases of the elastic allocations a copy's ends lie in (nullptr: that end is not elastic).
struct CopyEnds {
    const void *dst = nullptr, *src = nullptr;
    bool any() const noexcept { return dst || src; }
};

class ElasticSpace {
public:
    ElasticSpace(Runtime &runtime, const ElasticSettings &settings);
    // Gives back whatever is still allocated, the kept chunks and its copy streams.
    ~ElasticSpace();
    ElasticSpace(const ElasticSpace &) = delete;
    ElasticSpace &operator=(const ElasticSpace &) = delete;

    // Reserves `size` bytes on `device` and maps all of them; *reserved gets the rounded size
    // and *alignment the granularity (the base's alignment). Throws NOT_SUPPORTED without a
    // virtual-memory group or for an alignment beyond the granularity, OUT_OF_MEMORY; nothing
    // is left reserved or mapped then.
    void *allocate(size_t size, int32_t device, size_t alignment, const char *tag, size_t *reserved,
                   size_t *granularity);
    // Unmaps and releases everything of the allocation at `base`, its home included; failures
    // are logged (the allocation is gone for the caller either way).
    void release(void *base) noexcept;
    bool empty() const noexcept { return live_.load(std::memory_order_relaxed) == 0; }

    // tidal_offload / tidal_restore: every allocation whose tag matches `glob` (fnmatch).
    // `out` says what was done, also when they throw part of the way.
    void offload(const char *glob, uint32_t flags, void *stream, tidal_elastic_result &out);
    void restore(const char *glob, uint32_t flags, void *stream, tidal_elastic_result &out);
    // The same for the chunks [base+offset, base+offset+size) touches of one allocation.
    void offload_range(void *base, size_t offset, size_t size, uint32_t flags, void *stream, tidal_elastic_result &out);
    void restore_range(void *base, size_t offset, size_t size, uint32_t flags, void *stream, tidal_elastic_result &out);

    // tidal_copy with either end in elastic memory (`ends`: the allocations they lie in, found by
    // the caller through the registry's address index): resident chunks copy as device memory,
    // offloaded ones in their home; discarded ones are INVALID_ARGUMENT (checked before
    // anything is copied).
    void copy(void *dst, const void *src, size_t size, const CopyEnds &ends, void *stream, CopyEngine &copies);
    // The same checks, nothing copied: tidal_copy_batch refuses a bad elastic item before it
    // copies any item.
    void check_copy(void *dst, const void *src, size_t size, const CopyEnds &ends);

    // The chunks [offset, offset+size) of the allocation at `base` touches (size 0: all).
    ChunkBytes bytes(const void *base, size_t offset, size_t size) const;
    void add_stats(int32_t device, tidal_migration_stats &stats) const;
    // Gives the kept physical chunks back to the runtime, and whatever a failed free or offload
    // could not (it was kept then); returns the bytes that went back. *failure (may be NULL)
    // gets the first refusal, after all else was tried; what was refused stays for the next trim.
    uint64_t trim(std::exception_ptr *failure);

private:
    friend class ElasticResidency; // moves chunks for the migration scheduler, under mutex_
    void copy_or_check(void *dst, const void *src, size_t size, const CopyEnds &ends, void *stream, CopyEngine *copies);
    struct Counters {
        uint64_t offloads = 0, restores = 0, copied_out = 0, copied_in = 0, discarded = 0;
    };
    using Map = std::map<uintptr_t, std::unique_ptr<ElasticAllocation>>;

    // The allocation whose base is `base`; INVALID_ARGUMENT when there is none.
    ElasticAllocation &owner(const void *base) const;
    // The allocation containing `p`, or nullptr: for the scheduler's moves, which name chunks
    // by their start and may still name those of an allocation being freed (the registry has
    // forgotten it already; the moves queued on it finish before it goes).
    ElasticAllocation *containing(const void *p) const;
    // The allocation at `base` (counted in `out`) and the chunks [offset, offset+size) touches.
    ElasticAllocation &span_of(const void *base, size_t offset, size_t size, size_t *first, size_t *last,
                               tidal_elastic_result &out) const;
    std::vector<ElasticAllocation *> matches(const char *glob) const;
    // Runs `body` under the lock, adding its time less the homes' to out.move_seconds.
    template <typename Body> void timed(tidal_elastic_result &out, Body &&body);
    // Waits for the work queued on `stream` (NULL: on each device holding resident chunks of
    // `found`), then calls `each` for every allocation.
    void offload_each(const std::vector<ElasticAllocation *> &found, void *stream,
                      const std::function<void(ElasticAllocation &)> &each);
    void offload_chunks(ElasticAllocation &a, size_t first, size_t last, uint32_t flags, tidal_elastic_result &out);
    void restore_chunks(ElasticAllocation &a, size_t first, size_t last, uint32_t flags, void *stream,
                        tidal_elastic_result &out);
    // Makes the home if missing; its time goes to out.home_seconds.
    void ensure_home(ElasticAllocation &a, tidal_elastic_result &out);
    // A physical chunk: a kept one, else a new one from the runtime. *pooled says which.
    void *physical(int32_t device, size_t size, bool *pooled);
    // Gives a chunk back to the runtime, or keeps it. One the runtime refuses is kept too (the
    // next trim tries again); returns false then.
    bool let_go(int32_t device, size_t size, void *chunk, bool keep, tidal_elastic_result &out) noexcept;
    void wait_before_offload(void *stream, int32_t device);
    const std::vector<void *> &copy_streams(int32_t device);
    void synchronize(const std::vector<void *> &streams, size_t used);
    double now() const;
    // Unmaps and gives back every mapped chunk; false when one stayed mapped.
    bool unmap_all(ElasticAllocation &a) noexcept;
    // Unmaps what is left of a freed allocation and releases its reservation; false when the
    // runtime refused a step (the allocation is then kept for the next trim).
    bool dismantle(ElasticAllocation &a) noexcept;

    Runtime &runtime_;
    ElasticSettings settings_;
    mutable std::mutex mutex_;
    Map allocations_;
    // Freed allocations the runtime would not let go of entirely (an unmap or the release of
    // the reservation failed): trim() and the destructor try again, so nothing is lost.
    std::vector<std::unique_ptr<ElasticAllocation>> freed_;
    std::atomic<size_t> live_{0};
    ChunkPool pool_;
    std::vector<Counters> counters_;            // per device
    std::vector<std::vector<void *>> streams_;  // per device, made on first use
};

} // namespace tidal::elastic

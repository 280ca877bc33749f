// Where each end of a batch's copies lives: host memory (the host copies it) or memory a
// device reaches (the batch kernel copies it), and which device. One finder per call: it
// remembers what it learnt, because a batch of a thousand items usually points into a handful
// of buffers, and each question costs — an interior pointer asks all 64 registry shards, and
// memory tidal does not know costs that and a runtime call (cudaPointerGetAttributes).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "registry/allocation_registry.h"
#include "runtime/runtime.h"

namespace tidal {

class PlaceFinder {
public:
    struct Place {
        bool device = false; // device kinds and managed memory; else host memory
        int32_t index = 0;   // the device, when `device`
        bool pinned = false; // host memory the devices can reach (pinned: tidal's or the runtime's)
    };

    PlaceFinder(const Runtime &runtime, const AllocationRegistry &registry) : runtime_(runtime), registry_(registry) {}

    // Where [p, p+size) lives. Throws INVALID_ARGUMENT naming item `index` when the range starts
    // inside a tidal allocation and runs past its end.
    Place locate(const void *p, size_t size, size_t index, bool destination);

private:
    struct Span {
        uintptr_t begin = 0, end = 0;
        bool contains(uintptr_t a) const noexcept { return a - begin < end - begin; }
    };
    struct Owner : Span { // a tidal allocation
        Place place;
        char tag[TIDAL_TAG_MAX]; // for the message when a range runs past its end
    };
    template <typename T, size_t N> struct Recent {
        std::array<T, N> entries{};
        size_t used = 0, next = 0;
        const T *find(uintptr_t a) const noexcept
        {
            for (size_t i = 0; i < used; ++i)
                if (entries[i].contains(a))
                    return &entries[i];
            return nullptr;
        }
        T &add(const T &entry) noexcept
        {
            T &slot = entries[next];
            slot = entry;
            next = (next + 1) % N;
            used = used < N ? used + 1 : N;
            return slot;
        }
    };
    Place foreign(const void *p, size_t size);

    const Runtime &runtime_;
    const AllocationRegistry &registry_;
    Recent<Owner, 8> owners_;
    Recent<Span, 4> vacancies_;  // ranges holding no tidal allocation
    Recent<Span, 4> host_pages_; // foreign memory the runtime called host memory, whole pages
};

} // namespace tidal

// The small-block size classes: 256 B .. 1 MiB, four classes per doubling. Every class is a
// multiple of 256 bytes so that blocks carved back to back from a 256-aligned slab are all
// 256-aligned; below 1 KiB that leaves 256, 512 and 768 (a 320-byte class could not be).
// Rounding wastes under 256 bytes below 1 KiB and at most 20 % of the block from 1 KiB up.
#pragma once

#include <array>
#include <bit>
#include <cstddef>

namespace tidal::pool {

class SizeClasses {
public:
    static constexpr size_t kMinSize = 256;
    static constexpr size_t kMaxSize = size_t{1} << 20;
    static constexpr unsigned kCount = 44; // 256, 512, 768, then 4 per doubling 1 KiB .. 1 MiB

    // The class of a request of `size` bytes, 1 <= size <= kMaxSize. Branch-light: this runs
    // on every fast-path allocation and free.
    static constexpr unsigned index(size_t size) noexcept
    {
        if (size <= 1024)
            return static_cast<unsigned>((size + 255) >> 8) - 1;
        const size_t s = size - 1;
        const unsigned log2 = static_cast<unsigned>(std::bit_width(s)) - 1; // >= 10
        const unsigned sub = static_cast<unsigned>(s >> (log2 - 2)) & 3u;
        return 4 + (log2 - 10) * 4 + sub;
    }

    static constexpr size_t size_of(unsigned cls) noexcept;
};

namespace detail {
constexpr std::array<size_t, SizeClasses::kCount> make_class_sizes() noexcept
{
    std::array<size_t, SizeClasses::kCount> sizes{};
    sizes[0] = 256;
    sizes[1] = 512;
    sizes[2] = 768;
    sizes[3] = 1024;
    // Above 1 KiB: (1 << b) + (sub + 1) * (1 << (b - 2)) for the doubling b.
    for (unsigned i = 4; i < SizeClasses::kCount; ++i) {
        const unsigned j = i - 4;
        const unsigned b = 10 + j / 4;
        const unsigned sub = j % 4;
        sizes[i] = (size_t{1} << b) + (sub + 1) * (size_t{1} << (b - 2));
    }
    return sizes;
}
inline constexpr std::array<size_t, SizeClasses::kCount> kClassSizes = make_class_sizes();
} // namespace detail

constexpr size_t SizeClasses::size_of(unsigned cls) noexcept { return detail::kClassSizes[cls]; }

static_assert(SizeClasses::size_of(SizeClasses::kCount - 1) == SizeClasses::kMaxSize);
static_assert(SizeClasses::index(SizeClasses::kMaxSize) == SizeClasses::kCount - 1);

} // namespace tidal::pool

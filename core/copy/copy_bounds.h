// The one rule every copy entry point applies to an end that lies in a tidal allocation: the
// range stays inside it. The pools pack blocks back to back, so a byte past an allocation's
// end is another owner's data (or, for host kinds, past the end of a heap block).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tidal {

// Throws INVALID_ARGUMENT naming the allocation [begin, end): the source or destination of
// `size` bytes at `p` runs past its end. `item` names the batch item, when there is one.
[[noreturn, gnu::cold]] void throw_past_end(const void *p, size_t size, uintptr_t begin, uintptr_t end,
                                            const char *tag, bool destination, const size_t *item);

// `p` lies in [begin, end): checks that `size` bytes from it do too.
inline void require_within(const void *p, size_t size, uintptr_t begin, uintptr_t end, const char *tag,
                           bool destination, const size_t *item = nullptr)
{
    if (size > end - reinterpret_cast<uintptr_t>(p)) [[unlikely]]
        throw_past_end(p, size, begin, end, tag, destination, item);
}

[[noreturn, gnu::cold]] void throw_into_allocation(const void *p, size_t size, uintptr_t next, bool destination,
                                                   const size_t *item);

// `p` lies outside every tidal allocation, and the next one starts at `next`: checks that
// `size` bytes from `p` stop before it (a host buffer overrun must not reach pooled memory).
inline void require_clear(const void *p, size_t size, uintptr_t next, bool destination, const size_t *item = nullptr)
{
    if (size > next - reinterpret_cast<uintptr_t>(p)) [[unlikely]]
        throw_into_allocation(p, size, next, destination, item);
}

// Whether [a, a+size) and [b, b+size) share a byte.
inline bool ranges_overlap(const void *a, const void *b, size_t size) noexcept
{
    const uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
    return x < y ? y - x < size : x - y < size;
}

} // namespace tidal

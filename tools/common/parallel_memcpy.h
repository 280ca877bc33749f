// memcpy split over host threads: the host's own copy rate, which bounds staged copies of
// pageable memory. Shared by `tidal bench` and the copy-bandwidth benchmark so both report
// the same figure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

namespace tidal_tool {

inline void parallel_memcpy(char *dst, const char *src, size_t n, unsigned threads)
{
    std::vector<std::thread> ts;
    const size_t per = (n + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t) {
        const size_t b = std::min(n, t * per), e = std::min(n, b + per);
        ts.emplace_back([=] { std::memcpy(dst + b, src + b, e - b); });
    }
    for (auto &t : ts)
        t.join();
}

} // namespace tidal_tool

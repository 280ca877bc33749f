// nontemporal_copy, the staging fill's copy: every byte arrives, at any size and any alignment
// of either end, and nothing past the end is written.
#include <doctest/doctest.h>

#include <vector>

#include "copy/nontemporal_copy.h"

TEST_CASE("nontemporal copy: intact at every size and alignment, nothing written past the end")
{
    std::vector<unsigned char> src(4096 + 256), dst(4096 + 256);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 37 + 11);
    for (size_t dst_off : {0u, 1u, 7u, 15u, 16u, 33u})
        for (size_t src_off : {0u, 3u, 16u, 61u})
            for (size_t n : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 127u, 128u, 1000u, 4096u}) {
                CAPTURE(dst_off);
                CAPTURE(src_off);
                CAPTURE(n);
                std::fill(dst.begin(), dst.end(), 0xEE);
                tidal::nontemporal_copy(dst.data() + dst_off, src.data() + src_off, n);
                tidal::nontemporal_fence();
                bool same = true, untouched = true;
                for (size_t i = 0; i < n; ++i)
                    same = same && dst[dst_off + i] == src[src_off + i];
                for (size_t i = 0; i < dst.size(); ++i)
                    if (i < dst_off || i >= dst_off + n)
                        untouched = untouched && dst[i] == 0xEE;
                CHECK(same);
                CHECK(untouched);
            }
}

// fill_slot, the staging fill's copy, in each of its ways to store ([copy] slot_stores): every
// byte arrives, at any size and any alignment of either end, and nothing past the end is
// written. Then the setting: read, described, and a bad value refused naming the key.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/config_loader.h"
#include "config/settings_describer.h"
#include "copy/slot_stores.h"
#include "status/error.h"

TEST_CASE("slot stores: intact at every size and alignment, nothing written past the end, each way")
{
    std::vector<unsigned char> src(4096 + 256), dst(4096 + 256);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 37 + 11);
    for (tidal::SlotStores how : {tidal::SlotStores::streaming, tidal::SlotStores::cached, tidal::SlotStores::demote})
        for (size_t dst_off : {0u, 1u, 7u, 15u, 16u, 33u})
            for (size_t src_off : {0u, 3u, 16u, 61u})
                for (size_t n : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 127u, 128u, 1000u, 4096u}) {
                    CAPTURE(static_cast<int>(how));
                    CAPTURE(dst_off);
                    CAPTURE(src_off);
                    CAPTURE(n);
                    std::fill(dst.begin(), dst.end(), 0xEE);
                    tidal::fill_slot(dst.data() + dst_off, src.data() + src_off, n, how);
                    tidal::slot_fence();
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

TEST_CASE("slot stores: [copy] slot_stores is read, described, and checked")
{
    CHECK(tidal::ConfigLoader::from_string("runtime = \"sim\"\n").copy.slot_stores == tidal::SlotStores::automatic);
    for (const char *name : {"auto", "streaming", "cached", "demote"}) {
        CAPTURE(name);
        const tidal::Settings s =
            tidal::ConfigLoader::from_string(std::string("runtime = \"sim\"\n[copy]\nslot_stores = \"") + name + "\"\n");
        CHECK(tidal::describe_settings(s).find(std::string("slot_stores = \"") + name + "\"\n") != std::string::npos);
    }
    CHECK(tidal::ConfigLoader::from_string("runtime = \"sim\"\n[copy]\nslot_stores = \"demote\"\n").copy.slot_stores ==
          tidal::SlotStores::demote);
    for (const char *bad : {"[copy]\nslot_stores = \"fast\"\n", "[copy]\nslot_stores = 1\n"}) {
        CAPTURE(bad);
        std::string why;
        try {
            (void)tidal::ConfigLoader::from_string(std::string("runtime = \"sim\"\n") + bad);
        } catch (const tidal::Error &e) {
            why = e.message();
            CHECK(e.status() == TIDAL_ERROR_CONFIG);
        }
        CHECK(why.find("copy.slot_stores") != std::string::npos);
    }
}

TEST_CASE("slot stores: auto demotes large copies only where the processor can, and a setting is kept")
{
    using tidal::SlotStores;
    constexpr size_t big = tidal::kDemoteFrom, small = tidal::kDemoteFrom - 4096;
    CHECK(tidal::slot_stores_for(SlotStores::automatic, big, true) == SlotStores::demote);
    CHECK(tidal::slot_stores_for(SlotStores::automatic, small, true) == SlotStores::streaming);
    // Without CLDEMOTE, demoting is ordinary cached stores: the slowest way at 16 MiB.
    CHECK(tidal::slot_stores_for(SlotStores::automatic, big, false) == SlotStores::streaming);
    for (SlotStores chosen : {SlotStores::streaming, SlotStores::cached, SlotStores::demote})
        for (size_t size : {small, big})
            for (bool demotes : {false, true})
                CHECK(tidal::slot_stores_for(chosen, size, demotes) == chosen);
}

// unit_cuts on its own: where one window's units must be cut so that each lives on one device.
#include <doctest/doctest.h>

#include <vector>

#include "migration/unit_split.h"

using namespace tidal;

TEST_CASE("one device for a whole untracked window: no cut, the window moves whole")
{
    CHECK(unit_cuts(0, 64, {{0, 10, 0}}, {}).empty());
    CHECK(unit_cuts(0, 64, {{10, 20, 1}, {30, 40, 1}}, {}).empty());
}

TEST_CASE("two devices in one call: cut where the declared devices differ, unclaimed bytes follow")
{
    CHECK(unit_cuts(0, 64, {{0, 32, 0}, {32, 64, 1}}, {}) == std::vector<uintptr_t>{32});
    // Unclaimed [40, 64) follows device 1 on its left; unclaimed [0, 8) follows device 0 on its right.
    CHECK(unit_cuts(0, 64, {{8, 20, 0}, {20, 40, 1}}, {}) == std::vector<uintptr_t>{20});
    CHECK(unit_cuts(0, 64, {{0, 16, 0}, {16, 32, 1}, {32, 48, 2}, {48, 64, 3}}, {}) ==
          std::vector<uintptr_t>{16, 32, 48});
    // Overlapping claims: the first one named wins its bytes.
    CHECK(unit_cuts(0, 64, {{0, 40, 0}, {32, 64, 1}}, {}) == std::vector<uintptr_t>{40});
}

TEST_CASE("a resident unit keeps the bytes no claim names on its device")
{
    // [0, 64) resident on device 0; device 1 declares [24, 48): its bytes are cut out.
    CHECK(unit_cuts(0, 64, {{24, 48, 1}}, {{0, 64, 0}}) == std::vector<uintptr_t>{24, 48});
    // The same device: nothing to cut.
    CHECK(unit_cuts(0, 64, {{24, 48, 0}}, {{0, 64, 0}}).empty());
    // Resident nowhere (evicted): the unit moves whole, as an untracked window does.
    CHECK(unit_cuts(0, 64, {{24, 48, 1}}, {{0, 64, -1}}).empty());
    // Units already cut stay cut; only the new device edge is added.
    CHECK(unit_cuts(0, 64, {{40, 64, 2}}, {{0, 32, 0}, {32, 64, 1}}) == std::vector<uintptr_t>{32, 40});
}

// Where the units of one [migration] chunk_size window must be cut so that every unit lives on
// one device (issue 16). A window is either untracked (no unit: a declaration moves it whole)
// or tiled by units; a unit is cut only where the devices declared for its bytes differ, so
// the window's size stays the largest a unit can be and one device never carries bytes that
// were declared for another.
//
// Pure: no runtime, no lock, no scheduler state (tests/unit/test_unit_split.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace tidal {

// Bytes [lo, hi) of a window and the device they belong to.
struct UnitClaim {
    uintptr_t lo;
    uintptr_t hi;
    int32_t device; // a device index; in an existing unit, -1 = resident nowhere
};

// The addresses strictly inside [window_lo, window_hi) where a unit must begin, in increasing
// order. `claims` are one call's declared device ranges clipped to the window, in the order
// the call names them (the first claim of a byte wins); `units` the window's existing units
// (empty: untracked). Bytes no claim names keep the device of their unit, or follow the
// nearest claimed bytes (to the left first) when their unit is resident nowhere.
std::vector<uintptr_t> unit_cuts(uintptr_t window_lo, uintptr_t window_hi, const std::vector<UnitClaim> &claims,
                                 const std::vector<UnitClaim> &units);

} // namespace tidal

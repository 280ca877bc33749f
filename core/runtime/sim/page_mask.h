// Where one managed page has a valid copy: a small bit set over locations.
#pragma once

#include <bit>
#include <cstdint>

namespace tidal::sim {

// Bit 0 is the host, bit d+1 device d. A page can be valid in several places at once only
// under read-mostly advice (read duplication), so the set, not a single owner, is the truth.
class PageMask {
public:
    static constexpr int32_t kHost = -1; // TIDAL_RT_LOCATION_HOST
    static constexpr int32_t kMaxDevices = 31;

    constexpr PageMask() = default;
    constexpr explicit PageMask(uint32_t bits) : bits_(bits) {}
    static constexpr PageMask at(int32_t location) { return PageMask(bit(location)); }

    constexpr bool has(int32_t location) const { return (bits_ & bit(location)) != 0; }
    constexpr bool on_host() const { return has(kHost); }
    constexpr bool on_device(int32_t device) const { return has(device); }
    constexpr int copies() const { return std::popcount(bits_); }
    constexpr bool empty() const { return bits_ == 0; }
    constexpr uint32_t bits() const { return bits_; }
    constexpr PageMask with(int32_t location) const { return PageMask(bits_ | bit(location)); }
    constexpr PageMask without(int32_t location) const { return PageMask(bits_ & ~bit(location)); }
    // The lowest-numbered device holding a copy, or -2 when only the host does.
    constexpr int32_t first_device() const
    {
        const uint32_t devices = bits_ >> 1;
        return devices == 0 ? -2 : std::countr_zero(devices);
    }
    friend constexpr bool operator==(PageMask, PageMask) = default;

private:
    static constexpr uint32_t bit(int32_t location) { return 1u << (location + 1); }
    uint32_t bits_ = 0;
};

} // namespace tidal::sim

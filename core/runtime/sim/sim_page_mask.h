// Where one managed page has a valid copy: a small bit set over locations.
#pragma once

#include <bit>
#include <cstdint>

namespace tidal::sim {

// The host and up to 64 devices (bit d of the device word is device d). A page can be valid in
// several places at once only under read-mostly advice (read duplication), so the set, not a
// single owner, is the truth. The host has its own flag rather than a bit of the word so that
// all 64 devices [sim] allows fit.
class PageMask {
public:
    static constexpr int32_t kHost = -1; // TIDAL_RT_LOCATION_HOST
    static constexpr int32_t kMaxDevices = 64;

    constexpr PageMask() = default;
    static constexpr PageMask at(int32_t location) { return PageMask().with(location); }

    constexpr bool has(int32_t location) const
    {
        return location == kHost ? host_ : (devices_ & bit(location)) != 0;
    }
    constexpr bool on_host() const { return host_; }
    constexpr bool on_device(int32_t device) const { return has(device); }
    constexpr int copies() const { return std::popcount(devices_) + (host_ ? 1 : 0); }
    constexpr bool empty() const { return devices_ == 0 && !host_; }
    constexpr PageMask with(int32_t location) const
    {
        PageMask m = *this;
        if (location == kHost)
            m.host_ = true;
        else
            m.devices_ |= bit(location);
        return m;
    }
    constexpr PageMask without(int32_t location) const
    {
        PageMask m = *this;
        if (location == kHost)
            m.host_ = false;
        else
            m.devices_ &= ~bit(location);
        return m;
    }
    // The lowest-numbered device holding a copy, or -2 when only the host does.
    constexpr int32_t first_device() const
    {
        return devices_ == 0 ? -2 : std::countr_zero(devices_);
    }
    friend constexpr bool operator==(PageMask, PageMask) = default;

private:
    static constexpr uint64_t bit(int32_t device) { return uint64_t{1} << device; }
    uint64_t devices_ = 0;
    bool host_ = false;
};

} // namespace tidal::sim

#include "policy/core_defaults.h"

namespace tidal {

tidal_placement CoreDefaults::place(const tidal_place_request &request) noexcept
{
    tidal_placement p{};
    p.struct_size = sizeof(p);
    p.kind = request.kind;
    if (p.kind == TIDAL_KIND_AUTO) {
        const bool host_heavy = (request.hints & (TIDAL_HINT_HOST_READ | TIDAL_HINT_HOST_WRITE)) &&
                                !(request.hints & TIDAL_HINT_DEVICE_ONLY);
        p.kind = host_heavy ? TIDAL_KIND_PINNED : TIDAL_KIND_DEVICE;
    }
    const bool host_kind = TIDAL_KIND_IS_HOST(p.kind);
    if (request.device >= 0)
        p.device = request.device;
    else
        p.device = host_kind ? TIDAL_DEVICE_HOST : 0;
    if (TIDAL_KIND_IS_MANAGED(p.kind) &&
        (request.hints & TIDAL_HINT_READ_MOSTLY))
        p.advice |= TIDAL_ADVICE_READ_MOSTLY;
    p.flags |= TIDAL_PLACEMENT_CACHEABLE; // a function of the request alone
    return p;
}

} // namespace tidal

#include "copy/place_finder.h"

#include <cstring>

#include "copy/copy_bounds.h"

namespace tidal {
namespace {

constexpr uintptr_t kPage = 4096; // no mapping, host or device, is finer than a host page

uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }

} // namespace

PlaceFinder::Place PlaceFinder::locate(const void *p, size_t size, size_t index, bool destination)
{
    const uintptr_t a = addr(p);
    const Owner *o = owners_.find(a);
    if (!o) {
        const Span *vacant = vacancies_.find(a);
        if (!vacant) {
            AllocationRegistry::Vacancy vacancy;
            if (auto r = registry_.find(p, &vacancy)) {
                const bool device = r->kind != TIDAL_KIND_PAGEABLE && r->kind != TIDAL_KIND_PINNED;
                Owner owner{{addr(r->base), addr(r->base) + r->size},
                            {device, r->device >= 0 ? r->device : r->runtime_device, r->kind == TIDAL_KIND_PINNED},
                            {}};
                std::memcpy(owner.tag, r->tag, sizeof owner.tag);
                o = &owners_.add(owner);
            } else {
                vacant = &vacancies_.add({vacancy.begin, vacancy.end});
            }
        }
        if (!o) {
            require_clear(p, size, vacant->end, destination, &index);
            return foreign(p, size);
        }
    }
    require_within(p, size, o->begin, o->end, o->tag, destination, &index);
    return o->place;
}

// Memory tidal did not allocate: the runtime says what it is, and memory it does not know is
// the host's. Host pages are remembered (a page is all host or all device), merged with the
// newest such range when they touch, so a walk through one malloc buffer asks once per page
// at most.
PlaceFinder::Place PlaceFinder::foreign(const void *p, size_t size)
{
    if (host_pages_.find(addr(p)))
        return Place{};
    int32_t kind = TIDAL_KIND_PAGEABLE, device = TIDAL_DEVICE_HOST;
    if (runtime_.pointer_kind(p, &kind, &device) == 0 && kind != TIDAL_KIND_PAGEABLE) {
        if (kind == TIDAL_KIND_PINNED)
            return Place{false, 0, true}; // not remembered as plain host pages: those are pageable
        return Place{true, device >= 0 ? device : 0};
    }
    const Span pages{addr(p) / kPage * kPage, (addr(p) + size + kPage - 1) / kPage * kPage};
    Span *newest = host_pages_.used ? &host_pages_.entries[(host_pages_.next + host_pages_.entries.size() - 1) %
                                                           host_pages_.entries.size()]
                                    : nullptr;
    if (newest && newest->end == pages.begin)
        newest->end = pages.end;
    else
        host_pages_.add(pages);
    return Place{};
}

} // namespace tidal

#include "copy/copy_bounds.h"

#include <fmt/format.h>

#include <string>

#include "status/error.h"

namespace tidal {

void throw_past_end(const void *p, size_t size, uintptr_t begin, uintptr_t end, const char *tag, bool destination,
                    const size_t *item)
{
    const std::string prefix = item ? fmt::format("item {}: ", *item) : std::string();
    const std::string named = tag && *tag ? fmt::format(", tag \"{}\"", tag) : std::string();
    throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                fmt::format("{}the {} ({} bytes at {}) runs past the end of its allocation ({} bytes at {:#x}{}); "
                            "nothing was copied",
                            prefix, destination ? "destination" : "source", size, p, end - begin, begin, named),
                "copy inside the allocation");
}

void throw_into_allocation(const void *p, size_t size, uintptr_t next, bool destination, const size_t *item)
{
    const std::string prefix = item ? fmt::format("item {}: ", *item) : std::string();
    throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                fmt::format("{}the {} ({} bytes at {}) runs into the tidal allocation at {:#x}; nothing was copied", prefix,
                            destination ? "destination" : "source", size, p, next),
                "copy inside one buffer");
}

} // namespace tidal

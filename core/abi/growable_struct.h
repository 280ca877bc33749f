// The one rule for the structs of tidal.h that start with struct_size (the header's opening
// comment states it for callers). The library accepts every size from the oldest release's up:
//  - it reads a caller's struct as this library's version of it: the fields the caller's size
//    covers, and for fields a caller built against an older tidal.h lacks, their *_INIT value;
//    trailing fields of a caller built against a newer tidal.h are not read;
//  - it writes only the bytes the caller's size covers, and leaves struct_size as the caller
//    set it;
//  - arrays of such structs are stepped by the caller's struct_size, not by sizeof.
// Sizes below the oldest release's are INVALID_ARGUMENT naming the struct and both sizes.
//
// Each struct's oldest size is written as "the end of the last field 0.1 had", never as sizeof:
// appending a field grows sizeof, and the oldest size must not grow with it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "status/error.h"
#include "tidal/tidal.h"

namespace tidal::abi {

// Where a field ends: the size of a struct version whose last field it is.
#define TIDAL_END_OF(type, field) (offsetof(type, field) + sizeof(static_cast<type *>(nullptr)->field))

// What the rule needs to know of one struct. A struct not listed here cannot be read or
// written through this file: the compiler says so.
template <typename T> struct Growable;

#define TIDAL_GROWABLE(type, init_macro, oldest_size)                                                                  \
    template <> struct Growable<type> {                                                                                \
        static constexpr const char *name = #type;                                                                     \
        static constexpr const char *init = #init_macro;                                                               \
        static constexpr size_t oldest = oldest_size;                                                                  \
        static type defaults() noexcept { return type init_macro; }                                                    \
    }

// The oldest sizes: tidal 0.1, the first release. tidal_check is older still: before `stream`
// was appended (callers without it run on tidal's own stream), and stays readable.
TIDAL_GROWABLE(tidal_alloc_desc, TIDAL_ALLOC_DESC_INIT, TIDAL_END_OF(tidal_alloc_desc, hints));
TIDAL_GROWABLE(tidal_pointer_info, TIDAL_POINTER_INFO_INIT, TIDAL_END_OF(tidal_pointer_info, placed_by));
TIDAL_GROWABLE(tidal_pool_stats, TIDAL_POOL_STATS_INIT, TIDAL_END_OF(tidal_pool_stats, fragmentation));
TIDAL_GROWABLE(tidal_range_info, TIDAL_RANGE_INFO_INIT, TIDAL_END_OF(tidal_range_info, coherency));
TIDAL_GROWABLE(tidal_access, TIDAL_ACCESS_INIT, TIDAL_END_OF(tidal_access, mode));
TIDAL_GROWABLE(tidal_migration_stats, TIDAL_MIGRATION_STATS_INIT, TIDAL_END_OF(tidal_migration_stats, budget_refusals));
TIDAL_GROWABLE(tidal_copy_item, TIDAL_COPY_ITEM_INIT, TIDAL_END_OF(tidal_copy_item, size));
TIDAL_GROWABLE(tidal_check, TIDAL_CHECK_INIT, TIDAL_END_OF(tidal_check, elapsed_ms));
TIDAL_GROWABLE(tidal_system_info, TIDAL_SYSTEM_INFO_INIT, TIDAL_END_OF(tidal_system_info, device_count));
TIDAL_GROWABLE(tidal_device_info, TIDAL_DEVICE_INFO_INIT, TIDAL_END_OF(tidal_device_info, numa_node));
// Newer than 0.1: its first version is the oldest.
TIDAL_GROWABLE(tidal_elastic_result, TIDAL_ELASTIC_RESULT_INIT, TIDAL_END_OF(tidal_elastic_result, move_seconds));
TIDAL_GROWABLE(tidal_peer_info, TIDAL_PEER_INFO_INIT, TIDAL_END_OF(tidal_peer_info, latency_us));

#undef TIDAL_GROWABLE

// Whether this library reads and writes a struct of `given` bytes. One compare: it sits on the
// allocation fast path.
template <typename T> constexpr bool size_accepted(size_t given) noexcept { return given >= Growable<T>::oldest; }

// The message for a refused size; `what` names the caller's pointer ("desc", "access 3").
template <typename T> std::string size_refused(const char *what, size_t given)
{
    return fmt::format("{}->struct_size is {}, smaller than {} bytes, the oldest {} this library reads "
                       "(this library's is {}); start it from {}",
                       what, given, Growable<T>::oldest, Growable<T>::name, sizeof(T), Growable<T>::init);
}

// The caller's struct of `given` bytes as this library's version, or nullptr when `given` is
// refused (below the oldest size). A struct at least as large as this library's is read in
// place: the allocation fast path costs one compare and copies nothing. An older one is
// copied over the defaults into `scratch`.
template <typename T> const T *read_in(const T *caller, size_t given, T &scratch) noexcept
{
    if (given >= sizeof(T)) [[likely]]
        return caller;
    if (!size_accepted<T>(given))
        return nullptr;
    scratch = Growable<T>::defaults();
    std::memcpy(static_cast<void *>(&scratch), caller, given);
    scratch.struct_size = sizeof(T);
    return &scratch;
}

// Writes `value` into the caller's struct of `given` (accepted) bytes: only the bytes `given`
// covers, struct_size unchanged. Bytes past this library's sizeof (a newer caller's fields)
// keep what the caller put there.
template <typename T> void write_out(T *caller, size_t given, const T &value) noexcept
{
    T copy = value;
    copy.struct_size = given;
    std::memcpy(static_cast<void *>(caller), &copy, std::min(given, sizeof(T)));
}

// A caller's array of `count` structs, stepped by the first entry's struct_size (a caller built
// against another tidal.h steps by its own sizeof), each read as read_in does, into `out`
// (emptied first: a caller may keep one from call to call). Every entry must carry the same
// struct_size. `noun` names one entry in messages ("access", "item").
template <typename T> void read_array(const T *entries, size_t count, const char *noun, std::vector<T> &out)
{
    // A count whose array could not fit in the address space is the caller's mistake (often a
    // negative number cast to size_t): refused before any entry is read or host memory asked for.
    const auto too_many = [&](size_t entry_bytes) {
        return count > static_cast<size_t>(PTRDIFF_MAX) / entry_bytes ||
               count * entry_bytes > UINTPTR_MAX - reinterpret_cast<uintptr_t>(entries);
    };
    const auto refuse_count = [&](size_t entry_bytes) {
        return Error(TIDAL_ERROR_INVALID_ARGUMENT,
                     fmt::format("count {} is too large: that many {} entries of {} bytes would not fit in the "
                                 "address space",
                                 count, Growable<T>::name, entry_bytes),
                     "pass the number of entries in the array");
    };
    if (too_many(Growable<T>::oldest))
        throw refuse_count(Growable<T>::oldest);
    const auto *bytes = reinterpret_cast<const unsigned char *>(entries);
    size_t stride = 0;
    std::memcpy(&stride, bytes, sizeof stride);
    if (!size_accepted<T>(stride))
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, size_refused<T>(fmt::format("{} 0", noun).c_str(), stride),
                    fmt::format("start each entry from {}", Growable<T>::init));
    if (too_many(std::max(stride, sizeof(T))))
        throw refuse_count(std::max(stride, sizeof(T)));
    out.clear();
    try {
        out.reserve(count);
    } catch (const std::bad_alloc &) {
        throw Error(TIDAL_ERROR_OUT_OF_MEMORY,
                    fmt::format("no host memory for a copy of {} {} entries ({} bytes)", count, Growable<T>::name,
                                count * sizeof(T)),
                    "pass fewer entries per call");
    }
    const size_t known = std::min(stride, sizeof(T));
    for (size_t i = 0; i < count; ++i) {
        T entry = Growable<T>::defaults(); // the fields an older caller's struct lacks
        std::memcpy(static_cast<void *>(&entry), bytes + i * stride, known);
        if (entry.struct_size != stride)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                        fmt::format("{} {} has struct_size {}, {} 0 has {}", noun, i, entry.struct_size, noun, stride),
                        "every entry of one call has the same struct_size");
        entry.struct_size = sizeof(T);
        out.push_back(entry);
    }
}

template <typename T> std::vector<T> read_array(const T *entries, size_t count, const char *noun)
{
    std::vector<T> out;
    read_array(entries, count, noun, out);
    return out;
}

} // namespace tidal::abi

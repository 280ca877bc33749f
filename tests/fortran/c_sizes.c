/* What the C compiler makes of tidal.h, for test_abi_layout.f90 to compare with the Fortran
 * mirror: struct sizes, field offsets and the values of the named constants. Lookups are by
 * name so the Fortran test reads like the header; an unknown name is a test failure there. */
#include <stddef.h>
#include <string.h>

#include "tidal/tidal.h"

#define SIZE(T)                        \
    if (strcmp(type, #T) == 0)         \
        return sizeof(T);

size_t tidal_test_sizeof(const char *type)
{
    SIZE(tidal_alloc_desc)
    SIZE(tidal_pointer_info)
    SIZE(tidal_range_info)
    SIZE(tidal_check)
    SIZE(tidal_system_info)
    SIZE(tidal_device_info)
    SIZE(tidal_access)
    SIZE(tidal_migration_stats)
    SIZE(tidal_copy_item)
    SIZE(tidal_elastic_result)
    SIZE(tidal_peer_info)
    return 0;
}

#define FIELD(T, F)                                              \
    if (strcmp(type, #T) == 0 && strcmp(field, #F) == 0)         \
        return (long long)offsetof(T, F);

long long tidal_test_offsetof(const char *type, const char *field)
{
    FIELD(tidal_alloc_desc, struct_size)
    FIELD(tidal_alloc_desc, kind)
    FIELD(tidal_alloc_desc, device)
    FIELD(tidal_alloc_desc, alignment)
    FIELD(tidal_alloc_desc, tag)
    FIELD(tidal_alloc_desc, hints)

    FIELD(tidal_pointer_info, struct_size)
    FIELD(tidal_pointer_info, base)
    FIELD(tidal_pointer_info, size)
    FIELD(tidal_pointer_info, kind)
    FIELD(tidal_pointer_info, device)
    FIELD(tidal_pointer_info, hints)
    FIELD(tidal_pointer_info, advice)
    FIELD(tidal_pointer_info, alignment)
    FIELD(tidal_pointer_info, tag)
    FIELD(tidal_pointer_info, placed_by)
    FIELD(tidal_pointer_info, resident_bytes)
    FIELD(tidal_pointer_info, offloaded_bytes)
    FIELD(tidal_pointer_info, discarded_bytes)

    FIELD(tidal_range_info, struct_size)
    FIELD(tidal_range_info, last_prefetch_location)
    FIELD(tidal_range_info, preferred_location)
    FIELD(tidal_range_info, read_mostly)
    FIELD(tidal_range_info, coherency)
    FIELD(tidal_range_info, resident_bytes)
    FIELD(tidal_range_info, offloaded_bytes)
    FIELD(tidal_range_info, discarded_bytes)

    FIELD(tidal_check, struct_size)
    FIELD(tidal_check, kind)
    FIELD(tidal_check, device)
    FIELD(tidal_check, target)
    FIELD(tidal_check, source)
    FIELD(tidal_check, source2)
    FIELD(tidal_check, size)
    FIELD(tidal_check, seed)
    FIELD(tidal_check, scalar)
    FIELD(tidal_check, repeat)
    FIELD(tidal_check, result)
    FIELD(tidal_check, elapsed_ms)
    FIELD(tidal_check, stream)

    FIELD(tidal_system_info, struct_size)
    FIELD(tidal_system_info, runtime)
    FIELD(tidal_system_info, runtime_detail)
    FIELD(tidal_system_info, device_count)
    FIELD(tidal_system_info, default_device)
    FIELD(tidal_system_info, local_rank)
    FIELD(tidal_system_info, rank)

    FIELD(tidal_device_info, struct_size)
    FIELD(tidal_device_info, index)
    FIELD(tidal_device_info, name)
    FIELD(tidal_device_info, arch)
    FIELD(tidal_device_info, total_memory)
    FIELD(tidal_device_info, free_memory)
    FIELD(tidal_device_info, page_size)
    FIELD(tidal_device_info, l2_size)
    FIELD(tidal_device_info, flags)
    FIELD(tidal_device_info, xnack)
    FIELD(tidal_device_info, numa_node)
    FIELD(tidal_device_info, pci_bus_id)
    FIELD(tidal_device_info, local_cpus)
    FIELD(tidal_device_info, peer_mask)

    FIELD(tidal_access, struct_size)
    FIELD(tidal_access, ptr)
    FIELD(tidal_access, size)
    FIELD(tidal_access, device)
    FIELD(tidal_access, mode)

    FIELD(tidal_copy_item, struct_size)
    FIELD(tidal_copy_item, dst)
    FIELD(tidal_copy_item, src)
    FIELD(tidal_copy_item, size)

    FIELD(tidal_migration_stats, struct_size)
    FIELD(tidal_migration_stats, budget)
    FIELD(tidal_migration_stats, resident_bytes)
    FIELD(tidal_migration_stats, resident_high_water)
    FIELD(tidal_migration_stats, protected_bytes)
    FIELD(tidal_migration_stats, declared_ranges)
    FIELD(tidal_migration_stats, migrated_bytes)
    FIELD(tidal_migration_stats, resident_hits)
    FIELD(tidal_migration_stats, migration_calls)
    FIELD(tidal_migration_stats, noops)
    FIELD(tidal_migration_stats, evictions)
    FIELD(tidal_migration_stats, evicted_bytes)
    FIELD(tidal_migration_stats, dropped_bytes)
    FIELD(tidal_migration_stats, budget_refusals)
    FIELD(tidal_migration_stats, elastic_offloads)
    FIELD(tidal_migration_stats, elastic_restores)
    FIELD(tidal_migration_stats, elastic_copied_out)
    FIELD(tidal_migration_stats, elastic_copied_in)
    FIELD(tidal_migration_stats, elastic_discarded)

    FIELD(tidal_elastic_result, struct_size)
    FIELD(tidal_elastic_result, allocations)
    FIELD(tidal_elastic_result, copied_bytes)
    FIELD(tidal_elastic_result, discarded_bytes)
    FIELD(tidal_elastic_result, released_bytes)
    FIELD(tidal_elastic_result, pooled_bytes)
    FIELD(tidal_elastic_result, mapped_bytes)
    FIELD(tidal_elastic_result, home_seconds)
    FIELD(tidal_elastic_result, move_seconds)

    FIELD(tidal_peer_info, struct_size)
    FIELD(tidal_peer_info, device)
    FIELD(tidal_peer_info, peer)
    FIELD(tidal_peer_info, can_access)
    FIELD(tidal_peer_info, link)
    FIELD(tidal_peer_info, hops)
    FIELD(tidal_peer_info, performance_rank)
    FIELD(tidal_peer_info, enabled)
    FIELD(tidal_peer_info, bandwidth)
    FIELD(tidal_peer_info, latency_us)
    return -1;
}

#define CONSTANT(N)                    \
    if (strcmp(name, #N) == 0) {       \
        *found = 1;                    \
        return (long long)(N);         \
    }

long long tidal_test_constant(const char *name, int *found)
{
    *found = 0;
    CONSTANT(TIDAL_VERSION_MAJOR)
    CONSTANT(TIDAL_VERSION_MINOR)
    CONSTANT(TIDAL_VERSION_PATCH)
    CONSTANT(TIDAL_VERSION_NUMBER)
    CONSTANT(TIDAL_ABI_VERSION)

    CONSTANT(TIDAL_OK)
    CONSTANT(TIDAL_ERROR_INVALID_ARGUMENT)
    CONSTANT(TIDAL_ERROR_OUT_OF_MEMORY)
    CONSTANT(TIDAL_ERROR_NOT_SUPPORTED)
    CONSTANT(TIDAL_ERROR_NO_DEVICE)
    CONSTANT(TIDAL_ERROR_UNKNOWN_POINTER)
    CONSTANT(TIDAL_ERROR_CONFIG)
    CONSTANT(TIDAL_ERROR_PLUGIN)
    CONSTANT(TIDAL_ERROR_RUNTIME)
    CONSTANT(TIDAL_ERROR_BUDGET_EXCEEDED)
    CONSTANT(TIDAL_ERROR_ILLEGAL_ACCESS)
    CONSTANT(TIDAL_ERROR_INTERNAL)
    CONSTANT(TIDAL_ERROR_NOT_FOUND)
    CONSTANT(TIDAL_ERROR_BUFFER_TOO_SMALL)

    CONSTANT(TIDAL_KIND_AUTO)
    CONSTANT(TIDAL_KIND_DEVICE)
    CONSTANT(TIDAL_KIND_MANAGED)
    CONSTANT(TIDAL_KIND_PINNED)
    CONSTANT(TIDAL_KIND_PAGEABLE)
    CONSTANT(TIDAL_KIND_DEVICE_FINE)
    CONSTANT(TIDAL_KIND_MANAGED_COARSE)
    CONSTANT(TIDAL_KIND_ELASTIC)
    CONSTANT(TIDAL_KIND_COUNT)

    CONSTANT(TIDAL_HINT_READ_MOSTLY)
    CONSTANT(TIDAL_HINT_HOST_READ)
    CONSTANT(TIDAL_HINT_HOST_WRITE)
    CONSTANT(TIDAL_HINT_DEVICE_ONLY)
    CONSTANT(TIDAL_HINT_STREAMING)
    CONSTANT(TIDAL_HINT_TEMPORARY)
    CONSTANT(TIDAL_HINT_ALL)

    CONSTANT(TIDAL_ADVICE_READ_MOSTLY)
    CONSTANT(TIDAL_ADVICE_PREFERRED_DEVICE)
    CONSTANT(TIDAL_ADVICE_PREFERRED_HOST)
    CONSTANT(TIDAL_ADVICE_ACCESSED_BY_DEVICE)
    CONSTANT(TIDAL_ADVICE_COARSE_GRAIN)
    CONSTANT(TIDAL_ADVICE_ALL)

    CONSTANT(TIDAL_DEVICE_DEFAULT)
    CONSTANT(TIDAL_DEVICE_HOST)
    CONSTANT(TIDAL_LOCATION_NONE)
    CONSTANT(TIDAL_TAG_MAX)

    CONSTANT(TIDAL_COHERENCY_UNKNOWN)
    CONSTANT(TIDAL_COHERENCY_FINE)
    CONSTANT(TIDAL_COHERENCY_COARSE)
    CONSTANT(TIDAL_COHERENCY_INDETERMINATE)

    CONSTANT(TIDAL_CHECK_TOUCH_READ)
    CONSTANT(TIDAL_CHECK_TOUCH_WRITE)
    CONSTANT(TIDAL_CHECK_PATTERN_FILL)
    CONSTANT(TIDAL_CHECK_PATTERN_VERIFY)
    CONSTANT(TIDAL_CHECK_COPY)
    CONSTANT(TIDAL_CHECK_TRIAD)
    CONSTANT(TIDAL_CHECK_ATOMIC_ADD)
    CONSTANT(TIDAL_CHECK_RUNTIME_COPY)
    CONSTANT(TIDAL_CHECK_SPIN)
    CONSTANT(TIDAL_CHECK_ATOMIC_SET)
    CONSTANT(TIDAL_CHECK_ATOMIC_SET_SHARED)
    CONSTANT(TIDAL_ATOMIC_AND32)
    CONSTANT(TIDAL_ATOMIC_OR32)
    CONSTANT(TIDAL_ATOMIC_XOR32)
    CONSTANT(TIDAL_ATOMIC_ADD32)
    CONSTANT(TIDAL_ATOMIC_SUB32)
    CONSTANT(TIDAL_ATOMIC_MIN32)
    CONSTANT(TIDAL_ATOMIC_MAX32)
    CONSTANT(TIDAL_ATOMIC_EXCH32)
    CONSTANT(TIDAL_ATOMIC_CAS32)
    CONSTANT(TIDAL_ATOMIC_AND64)
    CONSTANT(TIDAL_ATOMIC_OR64)
    CONSTANT(TIDAL_ATOMIC_XOR64)
    CONSTANT(TIDAL_ATOMIC_ADD64)
    CONSTANT(TIDAL_ATOMIC_SUB64)
    CONSTANT(TIDAL_ATOMIC_MIN64)
    CONSTANT(TIDAL_ATOMIC_MAX64)
    CONSTANT(TIDAL_ATOMIC_EXCH64)
    CONSTANT(TIDAL_ATOMIC_CAS64)
    CONSTANT(TIDAL_ATOMIC_FADD32)
    CONSTANT(TIDAL_ATOMIC_ALL)
    CONSTANT(TIDAL_ATOMIC_SET_BYTES)

    CONSTANT(TIDAL_XNACK_NOT_APPLICABLE)
    CONSTANT(TIDAL_XNACK_ON)
    CONSTANT(TIDAL_XNACK_OFF)
    CONSTANT(TIDAL_XNACK_UNKNOWN)
    CONSTANT(TIDAL_LINK_UNKNOWN)
    CONSTANT(TIDAL_LINK_SAME)
    CONSTANT(TIDAL_LINK_PCIE)
    CONSTANT(TIDAL_LINK_XGMI)
    CONSTANT(TIDAL_LINK_NVLINK)
    CONSTANT(TIDAL_LINK_NONE)

    CONSTANT(TIDAL_DEVICE_FLAG_SIMULATED)
    CONSTANT(TIDAL_DEVICE_FLAG_MANAGED)
    CONSTANT(TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED)
    CONSTANT(TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS)
    CONSTANT(TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT)
    CONSTANT(TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS)
    CONSTANT(TIDAL_DEVICE_FLAG_FINE_GRAINED)

    CONSTANT(TIDAL_ACCESS_READ)
    CONSTANT(TIDAL_ACCESS_WRITE)
    CONSTANT(TIDAL_ACCESS_READ_WRITE)
    CONSTANT(TIDAL_DECLARE_LOOKAHEAD)
    CONSTANT(TIDAL_DECLARE_FLAGS_ALL)
    CONSTANT(TIDAL_OFFLOAD_DISCARD)
    CONSTANT(TIDAL_OFFLOAD_KEEP_PHYSICAL)
    CONSTANT(TIDAL_OFFLOAD_FLAGS_ALL)
    CONSTANT(TIDAL_RESTORE_READ_ONLY)
    CONSTANT(TIDAL_RESTORE_FLAGS_ALL)
    return 0;
}

const char *tidal_test_version_string(void)
{
    return TIDAL_VERSION_STRING;
}

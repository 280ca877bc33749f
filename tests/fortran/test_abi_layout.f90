! The Fortran mirror of tidal.h has the C layout: every bind(C) struct of module tidal_c has
! the C size and every field the C offset, and every constant of tidal_constants the C value.
! c_sizes.c reports what the C compiler makes of the header.
program test_abi_layout
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int64
  use tidal_constants
  use tidal_c, only: tidal_alloc_desc, tidal_pointer_info, tidal_range_info, tidal_check, &
                     tidal_system_info, tidal_device_info, tidal_access, tidal_migration_stats, &
                     tidal_copy_item, tidal_elastic_result, tidal_peer_info
  use tidal_test_support, only: expect, expect_equal_int
  implicit none

  interface
     function c_sizeof_struct(type) result(bytes) bind(C, name='tidal_test_sizeof')
       import :: c_char, c_size_t
       character(kind=c_char), intent(in) :: type(*)
       integer(c_size_t) :: bytes
     end function c_sizeof_struct
     function c_offsetof(type, field) result(offset) bind(C, name='tidal_test_offsetof')
       import :: c_char, c_long_long
       character(kind=c_char), intent(in) :: type(*), field(*)
       integer(c_long_long) :: offset
     end function c_offsetof
     function c_constant(name, found) result(value) bind(C, name='tidal_test_constant')
       import :: c_char, c_int, c_long_long
       character(kind=c_char), intent(in) :: name(*)
       integer(c_int), intent(out) :: found
       integer(c_long_long) :: value
     end function c_constant
     function c_version_string() result(text) bind(C, name='tidal_test_version_string')
       import :: c_ptr
       type(c_ptr) :: text
     end function c_version_string
  end interface

  type(tidal_alloc_desc), target :: desc
  type(tidal_pointer_info), target :: pointer_info
  type(tidal_range_info), target :: range_info
  type(tidal_check), target :: check
  type(tidal_system_info), target :: system_info
  type(tidal_device_info), target :: device_info
  type(tidal_access), target :: access
  type(tidal_migration_stats), target :: migration
  type(tidal_copy_item), target :: copy_item
  type(tidal_elastic_result), target :: elastic
  type(tidal_peer_info), target :: peer_info
  integer :: checked = 0

  call size_is('tidal_alloc_desc', c_sizeof(desc))
  call offset_is('tidal_alloc_desc', 'struct_size', c_loc(desc), c_loc(desc%struct_size))
  call offset_is('tidal_alloc_desc', 'kind', c_loc(desc), c_loc(desc%kind))
  call offset_is('tidal_alloc_desc', 'device', c_loc(desc), c_loc(desc%device))
  call offset_is('tidal_alloc_desc', 'alignment', c_loc(desc), c_loc(desc%alignment))
  call offset_is('tidal_alloc_desc', 'tag', c_loc(desc), c_loc(desc%tag))
  call offset_is('tidal_alloc_desc', 'hints', c_loc(desc), c_loc(desc%hints))

  call size_is('tidal_pointer_info', c_sizeof(pointer_info))
  call offset_is('tidal_pointer_info', 'struct_size', c_loc(pointer_info), c_loc(pointer_info%struct_size))
  call offset_is('tidal_pointer_info', 'base', c_loc(pointer_info), c_loc(pointer_info%base))
  call offset_is('tidal_pointer_info', 'size', c_loc(pointer_info), c_loc(pointer_info%size))
  call offset_is('tidal_pointer_info', 'kind', c_loc(pointer_info), c_loc(pointer_info%kind))
  call offset_is('tidal_pointer_info', 'device', c_loc(pointer_info), c_loc(pointer_info%device))
  call offset_is('tidal_pointer_info', 'hints', c_loc(pointer_info), c_loc(pointer_info%hints))
  call offset_is('tidal_pointer_info', 'advice', c_loc(pointer_info), c_loc(pointer_info%advice))
  call offset_is('tidal_pointer_info', 'alignment', c_loc(pointer_info), c_loc(pointer_info%alignment))
  call offset_is('tidal_pointer_info', 'tag', c_loc(pointer_info), c_loc(pointer_info%tag))
  call offset_is('tidal_pointer_info', 'placed_by', c_loc(pointer_info), c_loc(pointer_info%placed_by))
  call offset_is('tidal_pointer_info', 'resident_bytes', c_loc(pointer_info), c_loc(pointer_info%resident_bytes))
  call offset_is('tidal_pointer_info', 'offloaded_bytes', c_loc(pointer_info), c_loc(pointer_info%offloaded_bytes))
  call offset_is('tidal_pointer_info', 'discarded_bytes', c_loc(pointer_info), c_loc(pointer_info%discarded_bytes))

  call size_is('tidal_range_info', c_sizeof(range_info))
  call offset_is('tidal_range_info', 'struct_size', c_loc(range_info), c_loc(range_info%struct_size))
  call offset_is('tidal_range_info', 'last_prefetch_location', c_loc(range_info), &
                 c_loc(range_info%last_prefetch_location))
  call offset_is('tidal_range_info', 'preferred_location', c_loc(range_info), &
                 c_loc(range_info%preferred_location))
  call offset_is('tidal_range_info', 'read_mostly', c_loc(range_info), c_loc(range_info%read_mostly))
  call offset_is('tidal_range_info', 'coherency', c_loc(range_info), c_loc(range_info%coherency))
  call offset_is('tidal_range_info', 'resident_bytes', c_loc(range_info), c_loc(range_info%resident_bytes))
  call offset_is('tidal_range_info', 'offloaded_bytes', c_loc(range_info), c_loc(range_info%offloaded_bytes))
  call offset_is('tidal_range_info', 'discarded_bytes', c_loc(range_info), c_loc(range_info%discarded_bytes))

  call size_is('tidal_check', c_sizeof(check))
  call offset_is('tidal_check', 'struct_size', c_loc(check), c_loc(check%struct_size))
  call offset_is('tidal_check', 'kind', c_loc(check), c_loc(check%kind))
  call offset_is('tidal_check', 'device', c_loc(check), c_loc(check%device))
  call offset_is('tidal_check', 'target', c_loc(check), c_loc(check%target))
  call offset_is('tidal_check', 'source', c_loc(check), c_loc(check%source))
  call offset_is('tidal_check', 'source2', c_loc(check), c_loc(check%source2))
  call offset_is('tidal_check', 'size', c_loc(check), c_loc(check%size))
  call offset_is('tidal_check', 'seed', c_loc(check), c_loc(check%seed))
  call offset_is('tidal_check', 'scalar', c_loc(check), c_loc(check%scalar))
  call offset_is('tidal_check', 'repeat', c_loc(check), c_loc(check%repeat))
  call offset_is('tidal_check', 'result', c_loc(check), c_loc(check%result))
  call offset_is('tidal_check', 'elapsed_ms', c_loc(check), c_loc(check%elapsed_ms))
  call offset_is('tidal_check', 'stream', c_loc(check), c_loc(check%stream))

  call size_is('tidal_system_info', c_sizeof(system_info))
  call offset_is('tidal_system_info', 'struct_size', c_loc(system_info), c_loc(system_info%struct_size))
  call offset_is('tidal_system_info', 'runtime', c_loc(system_info), c_loc(system_info%runtime))
  call offset_is('tidal_system_info', 'runtime_detail', c_loc(system_info), &
                 c_loc(system_info%runtime_detail))
  call offset_is('tidal_system_info', 'device_count', c_loc(system_info), c_loc(system_info%device_count))
  call offset_is('tidal_system_info', 'default_device', c_loc(system_info), c_loc(system_info%default_device))
  call offset_is('tidal_system_info', 'local_rank', c_loc(system_info), c_loc(system_info%local_rank))
  call offset_is('tidal_system_info', 'rank', c_loc(system_info), c_loc(system_info%rank))

  call size_is('tidal_device_info', c_sizeof(device_info))
  call offset_is('tidal_device_info', 'struct_size', c_loc(device_info), c_loc(device_info%struct_size))
  call offset_is('tidal_device_info', 'index', c_loc(device_info), c_loc(device_info%index))
  call offset_is('tidal_device_info', 'name', c_loc(device_info), c_loc(device_info%name))
  call offset_is('tidal_device_info', 'arch', c_loc(device_info), c_loc(device_info%arch))
  call offset_is('tidal_device_info', 'total_memory', c_loc(device_info), c_loc(device_info%total_memory))
  call offset_is('tidal_device_info', 'free_memory', c_loc(device_info), c_loc(device_info%free_memory))
  call offset_is('tidal_device_info', 'page_size', c_loc(device_info), c_loc(device_info%page_size))
  call offset_is('tidal_device_info', 'l2_size', c_loc(device_info), c_loc(device_info%l2_size))
  call offset_is('tidal_device_info', 'flags', c_loc(device_info), c_loc(device_info%flags))
  call offset_is('tidal_device_info', 'xnack', c_loc(device_info), c_loc(device_info%xnack))
  call offset_is('tidal_device_info', 'numa_node', c_loc(device_info), c_loc(device_info%numa_node))
  call offset_is('tidal_device_info', 'pci_bus_id', c_loc(device_info), c_loc(device_info%pci_bus_id))
  call offset_is('tidal_device_info', 'local_cpus', c_loc(device_info), c_loc(device_info%local_cpus))
  call offset_is('tidal_device_info', 'peer_mask', c_loc(device_info), c_loc(device_info%peer_mask))

  call size_is('tidal_access', c_sizeof(access))
  call offset_is('tidal_access', 'struct_size', c_loc(access), c_loc(access%struct_size))
  call offset_is('tidal_access', 'ptr', c_loc(access), c_loc(access%ptr))
  call offset_is('tidal_access', 'size', c_loc(access), c_loc(access%size))
  call offset_is('tidal_access', 'device', c_loc(access), c_loc(access%device))
  call offset_is('tidal_access', 'mode', c_loc(access), c_loc(access%mode))

  call size_is('tidal_copy_item', c_sizeof(copy_item))
  call offset_is('tidal_copy_item', 'struct_size', c_loc(copy_item), c_loc(copy_item%struct_size))
  call offset_is('tidal_copy_item', 'dst', c_loc(copy_item), c_loc(copy_item%dst))
  call offset_is('tidal_copy_item', 'src', c_loc(copy_item), c_loc(copy_item%src))
  call offset_is('tidal_copy_item', 'size', c_loc(copy_item), c_loc(copy_item%size))

  call size_is('tidal_migration_stats', c_sizeof(migration))
  call offset_is('tidal_migration_stats', 'struct_size', c_loc(migration), c_loc(migration%struct_size))
  call offset_is('tidal_migration_stats', 'budget', c_loc(migration), c_loc(migration%budget))
  call offset_is('tidal_migration_stats', 'resident_bytes', c_loc(migration), c_loc(migration%resident_bytes))
  call offset_is('tidal_migration_stats', 'resident_high_water', c_loc(migration), c_loc(migration%resident_high_water))
  call offset_is('tidal_migration_stats', 'protected_bytes', c_loc(migration), c_loc(migration%protected_bytes))
  call offset_is('tidal_migration_stats', 'declared_ranges', c_loc(migration), c_loc(migration%declared_ranges))
  call offset_is('tidal_migration_stats', 'migrated_bytes', c_loc(migration), c_loc(migration%migrated_bytes))
  call offset_is('tidal_migration_stats', 'resident_hits', c_loc(migration), c_loc(migration%resident_hits))
  call offset_is('tidal_migration_stats', 'migration_calls', c_loc(migration), c_loc(migration%migration_calls))
  call offset_is('tidal_migration_stats', 'noops', c_loc(migration), c_loc(migration%noops))
  call offset_is('tidal_migration_stats', 'evictions', c_loc(migration), c_loc(migration%evictions))
  call offset_is('tidal_migration_stats', 'evicted_bytes', c_loc(migration), c_loc(migration%evicted_bytes))
  call offset_is('tidal_migration_stats', 'dropped_bytes', c_loc(migration), c_loc(migration%dropped_bytes))
  call offset_is('tidal_migration_stats', 'budget_refusals', c_loc(migration), c_loc(migration%budget_refusals))
  call offset_is('tidal_migration_stats', 'elastic_offloads', c_loc(migration), c_loc(migration%elastic_offloads))
  call offset_is('tidal_migration_stats', 'elastic_restores', c_loc(migration), c_loc(migration%elastic_restores))
  call offset_is('tidal_migration_stats', 'elastic_copied_out', c_loc(migration), c_loc(migration%elastic_copied_out))
  call offset_is('tidal_migration_stats', 'elastic_copied_in', c_loc(migration), c_loc(migration%elastic_copied_in))
  call offset_is('tidal_migration_stats', 'elastic_discarded', c_loc(migration), c_loc(migration%elastic_discarded))

  call size_is('tidal_elastic_result', c_sizeof(elastic))
  call offset_is('tidal_elastic_result', 'struct_size', c_loc(elastic), c_loc(elastic%struct_size))
  call offset_is('tidal_elastic_result', 'allocations', c_loc(elastic), c_loc(elastic%allocations))
  call offset_is('tidal_elastic_result', 'copied_bytes', c_loc(elastic), c_loc(elastic%copied_bytes))
  call offset_is('tidal_elastic_result', 'discarded_bytes', c_loc(elastic), c_loc(elastic%discarded_bytes))
  call offset_is('tidal_elastic_result', 'released_bytes', c_loc(elastic), c_loc(elastic%released_bytes))
  call offset_is('tidal_elastic_result', 'pooled_bytes', c_loc(elastic), c_loc(elastic%pooled_bytes))
  call offset_is('tidal_elastic_result', 'mapped_bytes', c_loc(elastic), c_loc(elastic%mapped_bytes))
  call offset_is('tidal_elastic_result', 'home_seconds', c_loc(elastic), c_loc(elastic%home_seconds))
  call offset_is('tidal_elastic_result', 'move_seconds', c_loc(elastic), c_loc(elastic%move_seconds))

  call size_is('tidal_peer_info', c_sizeof(peer_info))
  call offset_is('tidal_peer_info', 'struct_size', c_loc(peer_info), c_loc(peer_info%struct_size))
  call offset_is('tidal_peer_info', 'device', c_loc(peer_info), c_loc(peer_info%device))
  call offset_is('tidal_peer_info', 'peer', c_loc(peer_info), c_loc(peer_info%peer))
  call offset_is('tidal_peer_info', 'can_access', c_loc(peer_info), c_loc(peer_info%can_access))
  call offset_is('tidal_peer_info', 'link', c_loc(peer_info), c_loc(peer_info%link))
  call offset_is('tidal_peer_info', 'hops', c_loc(peer_info), c_loc(peer_info%hops))
  call offset_is('tidal_peer_info', 'performance_rank', c_loc(peer_info), c_loc(peer_info%performance_rank))
  call offset_is('tidal_peer_info', 'enabled', c_loc(peer_info), c_loc(peer_info%enabled))
  call offset_is('tidal_peer_info', 'bandwidth', c_loc(peer_info), c_loc(peer_info%bandwidth))
  call offset_is('tidal_peer_info', 'latency_us', c_loc(peer_info), c_loc(peer_info%latency_us))

  ! Default initialisation stands in for the *_INIT macros: the values they set must match.
  call expect(desc%kind == TIDAL_KIND_AUTO .and. desc%device == TIDAL_DEVICE_DEFAULT .and. &
              .not. c_associated(desc%tag) .and. desc%hints == 0, 'tidal_alloc_desc defaults')
  call expect(device_info%numa_node == -1 .and. device_info%xnack == TIDAL_XNACK_NOT_APPLICABLE, &
              'tidal_device_info defaults')
  call expect(range_info%last_prefetch_location == TIDAL_LOCATION_NONE .and. &
              range_info%preferred_location == TIDAL_LOCATION_NONE, 'tidal_range_info defaults')
  call expect(check%repeat == 1 .and. check%kind == TIDAL_CHECK_TOUCH_READ .and. &
              .not. c_associated(check%stream), 'tidal_check defaults')
  call expect(access%mode == TIDAL_ACCESS_READ .and. access%device == 0 .and. &
              .not. c_associated(access%ptr) .and. access%size == 0, 'tidal_access defaults')
  call expect(migration%budget == 0 .and. migration%evictions == 0, 'tidal_migration_stats defaults')
  call expect(.not. c_associated(copy_item%dst) .and. .not. c_associated(copy_item%src) .and. &
              copy_item%size == 0, 'tidal_copy_item defaults')

  ! Every constant of tidal_constants, by its C name (check_mirror.py makes sure none is
  ! missing from this list).
  call constant_is('TIDAL_VERSION_MAJOR', TIDAL_VERSION_MAJOR)
  call constant_is('TIDAL_VERSION_MINOR', TIDAL_VERSION_MINOR)
  call constant_is('TIDAL_VERSION_PATCH', TIDAL_VERSION_PATCH)
  call constant_is('TIDAL_VERSION_NUMBER', TIDAL_VERSION_NUMBER)
  call constant_is('TIDAL_ABI_VERSION', TIDAL_ABI_VERSION)
  call constant_is('TIDAL_OK', TIDAL_OK)
  call constant_is('TIDAL_ERROR_INVALID_ARGUMENT', TIDAL_ERROR_INVALID_ARGUMENT)
  call constant_is('TIDAL_ERROR_OUT_OF_MEMORY', TIDAL_ERROR_OUT_OF_MEMORY)
  call constant_is('TIDAL_ERROR_NOT_SUPPORTED', TIDAL_ERROR_NOT_SUPPORTED)
  call constant_is('TIDAL_ERROR_NO_DEVICE', TIDAL_ERROR_NO_DEVICE)
  call constant_is('TIDAL_ERROR_UNKNOWN_POINTER', TIDAL_ERROR_UNKNOWN_POINTER)
  call constant_is('TIDAL_ERROR_CONFIG', TIDAL_ERROR_CONFIG)
  call constant_is('TIDAL_ERROR_PLUGIN', TIDAL_ERROR_PLUGIN)
  call constant_is('TIDAL_ERROR_RUNTIME', TIDAL_ERROR_RUNTIME)
  call constant_is('TIDAL_ERROR_BUDGET_EXCEEDED', TIDAL_ERROR_BUDGET_EXCEEDED)
  call constant_is('TIDAL_ERROR_ILLEGAL_ACCESS', TIDAL_ERROR_ILLEGAL_ACCESS)
  call constant_is('TIDAL_ERROR_INTERNAL', TIDAL_ERROR_INTERNAL)
  call constant_is('TIDAL_ERROR_NOT_FOUND', TIDAL_ERROR_NOT_FOUND)
  call constant_is('TIDAL_ERROR_BUFFER_TOO_SMALL', TIDAL_ERROR_BUFFER_TOO_SMALL)
  call constant_is('TIDAL_KIND_AUTO', TIDAL_KIND_AUTO)
  call constant_is('TIDAL_KIND_DEVICE', TIDAL_KIND_DEVICE)
  call constant_is('TIDAL_KIND_MANAGED', TIDAL_KIND_MANAGED)
  call constant_is('TIDAL_KIND_PINNED', TIDAL_KIND_PINNED)
  call constant_is('TIDAL_KIND_PAGEABLE', TIDAL_KIND_PAGEABLE)
  call constant_is('TIDAL_KIND_DEVICE_FINE', TIDAL_KIND_DEVICE_FINE)
  call constant_is('TIDAL_KIND_MANAGED_COARSE', TIDAL_KIND_MANAGED_COARSE)
  call constant_is('TIDAL_KIND_ELASTIC', TIDAL_KIND_ELASTIC)
  call constant_is('TIDAL_KIND_COUNT', TIDAL_KIND_COUNT)
  call constant_is('TIDAL_HINT_READ_MOSTLY', TIDAL_HINT_READ_MOSTLY)
  call constant_is('TIDAL_HINT_HOST_READ', TIDAL_HINT_HOST_READ)
  call constant_is('TIDAL_HINT_HOST_WRITE', TIDAL_HINT_HOST_WRITE)
  call constant_is('TIDAL_HINT_DEVICE_ONLY', TIDAL_HINT_DEVICE_ONLY)
  call constant_is('TIDAL_HINT_STREAMING', TIDAL_HINT_STREAMING)
  call constant_is('TIDAL_HINT_TEMPORARY', TIDAL_HINT_TEMPORARY)
  call constant_is('TIDAL_HINT_ALL', TIDAL_HINT_ALL)
  call constant_is('TIDAL_ADVICE_READ_MOSTLY', TIDAL_ADVICE_READ_MOSTLY)
  call constant_is('TIDAL_ADVICE_PREFERRED_DEVICE', TIDAL_ADVICE_PREFERRED_DEVICE)
  call constant_is('TIDAL_ADVICE_PREFERRED_HOST', TIDAL_ADVICE_PREFERRED_HOST)
  call constant_is('TIDAL_ADVICE_ACCESSED_BY_DEVICE', TIDAL_ADVICE_ACCESSED_BY_DEVICE)
  call constant_is('TIDAL_ADVICE_COARSE_GRAIN', TIDAL_ADVICE_COARSE_GRAIN)
  call constant_is('TIDAL_ADVICE_ALL', TIDAL_ADVICE_ALL)
  call constant_is('TIDAL_DEVICE_DEFAULT', TIDAL_DEVICE_DEFAULT)
  call constant_is('TIDAL_DEVICE_HOST', TIDAL_DEVICE_HOST)
  call constant_is('TIDAL_LOCATION_NONE', TIDAL_LOCATION_NONE)
  call constant_is('TIDAL_TAG_MAX', TIDAL_TAG_MAX)
  call constant_is('TIDAL_COHERENCY_UNKNOWN', TIDAL_COHERENCY_UNKNOWN)
  call constant_is('TIDAL_COHERENCY_FINE', TIDAL_COHERENCY_FINE)
  call constant_is('TIDAL_COHERENCY_COARSE', TIDAL_COHERENCY_COARSE)
  call constant_is('TIDAL_COHERENCY_INDETERMINATE', TIDAL_COHERENCY_INDETERMINATE)
  call constant_is('TIDAL_CHECK_TOUCH_READ', TIDAL_CHECK_TOUCH_READ)
  call constant_is('TIDAL_CHECK_TOUCH_WRITE', TIDAL_CHECK_TOUCH_WRITE)
  call constant_is('TIDAL_CHECK_PATTERN_FILL', TIDAL_CHECK_PATTERN_FILL)
  call constant_is('TIDAL_CHECK_PATTERN_VERIFY', TIDAL_CHECK_PATTERN_VERIFY)
  call constant_is('TIDAL_CHECK_COPY', TIDAL_CHECK_COPY)
  call constant_is('TIDAL_CHECK_TRIAD', TIDAL_CHECK_TRIAD)
  call constant_is('TIDAL_CHECK_ATOMIC_ADD', TIDAL_CHECK_ATOMIC_ADD)
  call constant_is('TIDAL_CHECK_RUNTIME_COPY', TIDAL_CHECK_RUNTIME_COPY)
  call constant_is('TIDAL_CHECK_SPIN', TIDAL_CHECK_SPIN)
  call constant_is('TIDAL_CHECK_ATOMIC_SET', TIDAL_CHECK_ATOMIC_SET)
  call constant_is('TIDAL_CHECK_ATOMIC_SET_SHARED', TIDAL_CHECK_ATOMIC_SET_SHARED)
  call constant_is('TIDAL_ATOMIC_AND32', TIDAL_ATOMIC_AND32)
  call constant_is('TIDAL_ATOMIC_OR32', TIDAL_ATOMIC_OR32)
  call constant_is('TIDAL_ATOMIC_XOR32', TIDAL_ATOMIC_XOR32)
  call constant_is('TIDAL_ATOMIC_ADD32', TIDAL_ATOMIC_ADD32)
  call constant_is('TIDAL_ATOMIC_SUB32', TIDAL_ATOMIC_SUB32)
  call constant_is('TIDAL_ATOMIC_MIN32', TIDAL_ATOMIC_MIN32)
  call constant_is('TIDAL_ATOMIC_MAX32', TIDAL_ATOMIC_MAX32)
  call constant_is('TIDAL_ATOMIC_EXCH32', TIDAL_ATOMIC_EXCH32)
  call constant_is('TIDAL_ATOMIC_CAS32', TIDAL_ATOMIC_CAS32)
  call constant_is('TIDAL_ATOMIC_AND64', TIDAL_ATOMIC_AND64)
  call constant_is('TIDAL_ATOMIC_OR64', TIDAL_ATOMIC_OR64)
  call constant_is('TIDAL_ATOMIC_XOR64', TIDAL_ATOMIC_XOR64)
  call constant_is('TIDAL_ATOMIC_ADD64', TIDAL_ATOMIC_ADD64)
  call constant_is('TIDAL_ATOMIC_SUB64', TIDAL_ATOMIC_SUB64)
  call constant_is('TIDAL_ATOMIC_MIN64', TIDAL_ATOMIC_MIN64)
  call constant_is('TIDAL_ATOMIC_MAX64', TIDAL_ATOMIC_MAX64)
  call constant_is('TIDAL_ATOMIC_EXCH64', TIDAL_ATOMIC_EXCH64)
  call constant_is('TIDAL_ATOMIC_CAS64', TIDAL_ATOMIC_CAS64)
  call constant_is('TIDAL_ATOMIC_FADD32', TIDAL_ATOMIC_FADD32)
  call constant_is('TIDAL_ATOMIC_ALL', TIDAL_ATOMIC_ALL)
  call constant_is('TIDAL_ATOMIC_SET_BYTES', TIDAL_ATOMIC_SET_BYTES)
  call constant_is('TIDAL_XNACK_NOT_APPLICABLE', TIDAL_XNACK_NOT_APPLICABLE)
  call constant_is('TIDAL_XNACK_ON', TIDAL_XNACK_ON)
  call constant_is('TIDAL_XNACK_OFF', TIDAL_XNACK_OFF)
  call constant_is('TIDAL_XNACK_UNKNOWN', TIDAL_XNACK_UNKNOWN)
  call constant_is('TIDAL_LINK_UNKNOWN', TIDAL_LINK_UNKNOWN)
  call constant_is('TIDAL_LINK_SAME', TIDAL_LINK_SAME)
  call constant_is('TIDAL_LINK_PCIE', TIDAL_LINK_PCIE)
  call constant_is('TIDAL_LINK_XGMI', TIDAL_LINK_XGMI)
  call constant_is('TIDAL_LINK_NVLINK', TIDAL_LINK_NVLINK)
  call constant_is('TIDAL_LINK_NONE', TIDAL_LINK_NONE)
  call constant_is('TIDAL_DEVICE_FLAG_SIMULATED', TIDAL_DEVICE_FLAG_SIMULATED)
  call constant_is('TIDAL_DEVICE_FLAG_MANAGED', TIDAL_DEVICE_FLAG_MANAGED)
  call constant_is('TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED', TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED)
  call constant_is('TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS', TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS)
  call constant_is('TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT', TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT)
  call constant_is('TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS', TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS)
  call constant_is('TIDAL_DEVICE_FLAG_FINE_GRAINED', TIDAL_DEVICE_FLAG_FINE_GRAINED)
  call constant_is('TIDAL_ACCESS_READ', TIDAL_ACCESS_READ)
  call constant_is('TIDAL_ACCESS_WRITE', TIDAL_ACCESS_WRITE)
  call constant_is('TIDAL_ACCESS_READ_WRITE', TIDAL_ACCESS_READ_WRITE)
  call constant_is('TIDAL_DECLARE_LOOKAHEAD', TIDAL_DECLARE_LOOKAHEAD)
  call constant_is('TIDAL_DECLARE_FLAGS_ALL', TIDAL_DECLARE_FLAGS_ALL)
  call constant_is('TIDAL_OFFLOAD_DISCARD', TIDAL_OFFLOAD_DISCARD)
  call constant_is('TIDAL_OFFLOAD_KEEP_PHYSICAL', TIDAL_OFFLOAD_KEEP_PHYSICAL)
  call constant_is('TIDAL_OFFLOAD_FLAGS_ALL', TIDAL_OFFLOAD_FLAGS_ALL)
  call constant_is('TIDAL_RESTORE_READ_ONLY', TIDAL_RESTORE_READ_ONLY)
  call constant_is('TIDAL_RESTORE_FLAGS_ALL', TIDAL_RESTORE_FLAGS_ALL)
  call expect(TIDAL_VERSION_STRING == c_string(c_version_string()), &
              'TIDAL_VERSION_STRING is the header''s ("' // c_string(c_version_string()) // '")')

  write (*, '(a, i0, a)') 'test_abi_layout: ', checked, ' sizes, offsets and constants match C'

contains

  function c_chars(text) result(chars)
    character(len=*), intent(in) :: text
    character(kind=c_char) :: chars(len(text) + 1)
    integer :: i
    do i = 1, len(text)
       chars(i) = text(i:i)
    end do
    chars(len(text) + 1) = c_null_char
  end function c_chars

  function c_string(pointer) result(text)
    type(c_ptr), intent(in) :: pointer
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    n = 0
    do
       call c_f_pointer(pointer, chars, [n + 1])
       if (chars(n + 1) == c_null_char) exit
       n = n + 1
    end do
    allocate(character(len=n) :: text)
    text = transfer(chars(1:n), text)
  end function c_string

  subroutine size_is(type, fortran_bytes)
    character(len=*), intent(in) :: type
    integer(c_size_t), intent(in) :: fortran_bytes
    call expect_equal_int(int(fortran_bytes, int64), int(c_sizeof_struct(c_chars(type)), int64), &
                          'c_sizeof(' // type // ') equals the C sizeof')
    checked = checked + 1
  end subroutine size_is

  subroutine offset_is(type, field, base, member)
    character(len=*), intent(in) :: type, field
    type(c_ptr), intent(in) :: base, member
    integer(int64) :: c_offset
    c_offset = c_offsetof(c_chars(type), c_chars(field))
    call expect(c_offset >= 0, 'c_sizes.c knows ' // type // '%' // field)
    call expect_equal_int(transfer(member, 0_c_intptr_t) - transfer(base, 0_c_intptr_t), &
                          c_offset, 'offset of ' // type // '%' // field // ' equals C offsetof')
    checked = checked + 1
  end subroutine offset_is

  subroutine constant_is(name, fortran_value)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: fortran_value
    integer(c_int) :: found
    integer(int64) :: c_value
    c_value = c_constant(c_chars(name), found)
    call expect(found == 1, 'c_sizes.c knows ' // name)
    call expect_equal_int(int(fortran_value, int64), c_value, name // ' equals the header''s value')
    checked = checked + 1
  end subroutine constant_is
end program test_abi_layout

! tidal — raw bind(C) interfaces to the C ABI (api/tidal/tidal.h), one block per C function.
!
! The second of three layers: a literal mirror of the header for callers who want the C calls
! themselves (and for module tidal, which builds the Fortran API on them). Names are the C
! names; structs are bind(C) derived types with the C field order, so their layout is the C
! layout (tests/fortran/test_abi_layout compares sizes and field offsets with the C compiler's).
! Type mapping: size_t -> integer(c_size_t), C enums -> integer(c_int), int32_t/uint32_t ->
! integer(c_int32_t), uint64_t -> integer(c_int64_t) (values above huge() would read negative;
! none of the fields gets near 2**63), pointers -> type(c_ptr), char[N] -> character(c_char)
! arrays of length N, const char * arguments -> NUL-terminated character(c_char) arrays.
! Functions returning `const char *` return type(c_ptr): convert with the helpers in module
! tidal (tidal_status_message and friends) rather than by hand.
module tidal_c
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_int32_t, c_int64_t, &
                                         c_ptr, c_size_t, c_null_ptr
  use tidal_constants, only: TIDAL_KIND_AUTO, TIDAL_DEVICE_DEFAULT, TIDAL_TAG_MAX, &
                             TIDAL_XNACK_NOT_APPLICABLE, TIDAL_LOCATION_NONE, TIDAL_LINK_UNKNOWN, &
                             TIDAL_COHERENCY_UNKNOWN, TIDAL_CHECK_TOUCH_READ, TIDAL_ACCESS_READ
  implicit none
  private
  public :: tidal_elastic_result, tidal_peer_info
  public :: tidal_alloc_desc, tidal_pointer_info, tidal_range_info, tidal_check, &
            tidal_system_info, tidal_device_info, tidal_pool_stats, tidal_access, &
            tidal_migration_stats, tidal_copy_item
  public :: tidal_version_number, tidal_version_string, tidal_status_name, &
            tidal_status_string, tidal_last_error, tidal_context_create, &
            tidal_context_create_from_file, tidal_context_create_from_string, &
            tidal_context_destroy, tidal_kind_name, tidal_alloc, tidal_free, &
            tidal_alloc_async, tidal_free_async, &
            tidal_pointer_query, tidal_prefetch, tidal_range_query, tidal_advise, &
            tidal_declare, tidal_budget_set, tidal_migration_stats_get, tidal_clock, &
            tidal_offload, tidal_offload_range, tidal_restore, tidal_restore_range, &
            tidal_stream_create, &
            tidal_stream_destroy, tidal_stream_forget, tidal_stream_synchronize, tidal_copy, tidal_copy_async, &
            tidal_copy_batch, &
            tidal_register, tidal_unregister, tidal_check_run, &
            tidal_system_info_get, tidal_device_info_get, tidal_config_describe, &
            tidal_file_name_expand, &
            tidal_pool_stats_get, tidal_pool_trim, tidal_peer_info_get, &
            tidal_stats_json, tidal_allocations_list

  ! ---- Structs. Default initialisation plays the role of the C *_INIT macros, except
  ! struct_size: a bind(C) type cannot default a component to its own c_sizeof, so set
  ! `x%struct_size = c_sizeof(x)` before passing one in. ------------------------------------

  !> tidal_alloc_desc: describes one allocation.
  type, bind(C) :: tidal_alloc_desc
     integer(c_size_t) :: struct_size = 0
     integer(c_int) :: kind = TIDAL_KIND_AUTO
     integer(c_int32_t) :: device = TIDAL_DEVICE_DEFAULT
     integer(c_size_t) :: alignment = 0
     type(c_ptr) :: tag = c_null_ptr           ! NULL or a NUL-terminated name
     integer(c_int32_t) :: hints = 0           ! uint32_t
  end type tidal_alloc_desc

  !> tidal_pointer_info: what tidal knows about one allocation.
  type, bind(C) :: tidal_pointer_info
     integer(c_size_t) :: struct_size = 0
     type(c_ptr) :: base = c_null_ptr
     integer(c_size_t) :: size = 0
     integer(c_int) :: kind = TIDAL_KIND_AUTO
     integer(c_int32_t) :: device = 0
     integer(c_int32_t) :: hints = 0           ! uint32_t
     integer(c_int32_t) :: advice = 0          ! uint32_t
     integer(c_size_t) :: alignment = 0
     character(kind=c_char) :: tag(TIDAL_TAG_MAX) = achar(0)
     character(kind=c_char) :: placed_by(32) = achar(0)
     integer(c_int64_t) :: resident_bytes = 0   ! elastic memory (0 for other kinds)
     integer(c_int64_t) :: offloaded_bytes = 0
     integer(c_int64_t) :: discarded_bytes = 0
  end type tidal_pointer_info

  !> tidal_range_info: the runtime's view of a managed range.
  type, bind(C) :: tidal_range_info
     integer(c_size_t) :: struct_size = 0
     integer(c_int32_t) :: last_prefetch_location = TIDAL_LOCATION_NONE
     integer(c_int32_t) :: preferred_location = TIDAL_LOCATION_NONE
     integer(c_int32_t) :: read_mostly = 0
     integer(c_int) :: coherency = TIDAL_COHERENCY_UNKNOWN
     integer(c_int64_t) :: resident_bytes = 0   ! elastic memory (0 for managed memory)
     integer(c_int64_t) :: offloaded_bytes = 0
     integer(c_int64_t) :: discarded_bytes = 0
  end type tidal_range_info

  !> tidal_pool_stats: one pool's counters.
  type, bind(C) :: tidal_pool_stats
     integer(c_size_t) :: struct_size = 0
     integer(c_int64_t) :: reserved_bytes = 0          ! uint64_t, likewise below
     integer(c_int64_t) :: reserved_high_water = 0
     integer(c_int64_t) :: in_use_bytes = 0
     integer(c_int64_t) :: in_use_high_water = 0
     integer(c_int64_t) :: allocations = 0
     integer(c_int64_t) :: frees = 0
     integer(c_int64_t) :: cache_hits = 0
     integer(c_int64_t) :: runtime_allocations = 0
     integer(c_int64_t) :: runtime_frees = 0
     real(c_double) :: fragmentation = 0.0_c_double
  end type tidal_pool_stats

  !> tidal_check: one validation kernel run.
  type, bind(C) :: tidal_check
     integer(c_size_t) :: struct_size = 0
     integer(c_int) :: kind = TIDAL_CHECK_TOUCH_READ
     integer(c_int32_t) :: device = 0
     type(c_ptr) :: target = c_null_ptr
     type(c_ptr) :: source = c_null_ptr
     type(c_ptr) :: source2 = c_null_ptr
     integer(c_size_t) :: size = 0
     integer(c_int64_t) :: seed = 0            ! uint64_t
     real(c_double) :: scalar = 0.0_c_double
     integer(c_int32_t) :: repeat = 1          ! uint32_t
     integer(c_int64_t) :: result = 0          ! uint64_t, out
     real(c_double) :: elapsed_ms = 0.0_c_double ! out
     type(c_ptr) :: stream = c_null_ptr        ! the caller's stream; c_null_ptr = tidal's own
  end type tidal_check

  !> tidal_access: one range the work about to be queued on a stream will touch
  !! (tidal_declare). Every element of one call has the same struct_size.
  type, bind(C) :: tidal_access
     integer(c_size_t) :: struct_size = 0
     type(c_ptr) :: ptr = c_null_ptr           ! inside a live tidal allocation
     integer(c_size_t) :: size = 0             ! bytes, > 0
     integer(c_int32_t) :: device = 0          ! index, or TIDAL_DEVICE_HOST
     integer(c_int32_t) :: mode = TIDAL_ACCESS_READ ! uint32_t, TIDAL_ACCESS_*
  end type tidal_access

  !> tidal_copy_item: one copy of a batch (tidal_copy_batch). Every element of one call has
  !! the same struct_size.
  type, bind(C) :: tidal_copy_item
     integer(c_size_t) :: struct_size = 0
     type(c_ptr) :: dst = c_null_ptr
     type(c_ptr) :: src = c_null_ptr
     integer(c_size_t) :: size = 0             ! bytes; 0 copies nothing
  end type tidal_copy_item

  !> tidal_migration_stats: what the scheduler did on one device.
  type, bind(C) :: tidal_migration_stats
     integer(c_size_t) :: struct_size = 0
     integer(c_int64_t) :: budget = 0                  ! uint64_t, likewise below; 0 = no limit
     integer(c_int64_t) :: resident_bytes = 0
     integer(c_int64_t) :: resident_high_water = 0
     integer(c_int64_t) :: protected_bytes = 0
     integer(c_int64_t) :: declared_ranges = 0
     integer(c_int64_t) :: migrated_bytes = 0
     integer(c_int64_t) :: resident_hits = 0
     integer(c_int64_t) :: migration_calls = 0
     integer(c_int64_t) :: noops = 0
     integer(c_int64_t) :: evictions = 0
     integer(c_int64_t) :: evicted_bytes = 0
     integer(c_int64_t) :: dropped_bytes = 0
     integer(c_int64_t) :: budget_refusals = 0
     integer(c_int64_t) :: elastic_offloads = 0
     integer(c_int64_t) :: elastic_restores = 0
     integer(c_int64_t) :: elastic_copied_out = 0
     integer(c_int64_t) :: elastic_copied_in = 0
     integer(c_int64_t) :: elastic_discarded = 0
  end type tidal_migration_stats

  !> tidal_elastic_result: what one offload or restore did.
  type, bind(C) :: tidal_elastic_result
     integer(c_size_t) :: struct_size = 0
     integer(c_int64_t) :: allocations = 0
     integer(c_int64_t) :: copied_bytes = 0
     integer(c_int64_t) :: discarded_bytes = 0
     integer(c_int64_t) :: released_bytes = 0
     integer(c_int64_t) :: pooled_bytes = 0
     integer(c_int64_t) :: mapped_bytes = 0
     real(c_double) :: home_seconds = 0
     real(c_double) :: move_seconds = 0
  end type tidal_elastic_result

  !> tidal_system_info: the runtime in use and how many devices it has.
  type, bind(C) :: tidal_system_info
     integer(c_size_t) :: struct_size = 0
     character(kind=c_char) :: runtime(16) = achar(0)
     character(kind=c_char) :: runtime_detail(128) = achar(0)
     integer(c_int32_t) :: device_count = 0
     integer(c_int32_t) :: default_device = TIDAL_DEVICE_DEFAULT
     integer(c_int32_t) :: local_rank = -1
     integer(c_int32_t) :: rank = -1
  end type tidal_system_info

  !> tidal_device_info: one device's capabilities.
  type, bind(C) :: tidal_device_info
     integer(c_size_t) :: struct_size = 0
     integer(c_int32_t) :: index = 0
     character(kind=c_char) :: name(128) = achar(0)
     character(kind=c_char) :: arch(64) = achar(0)
     integer(c_int64_t) :: total_memory = 0    ! uint64_t
     integer(c_int64_t) :: free_memory = 0     ! uint64_t
     integer(c_int64_t) :: page_size = 0       ! uint64_t
     integer(c_int64_t) :: l2_size = 0         ! uint64_t
     integer(c_int32_t) :: flags = 0           ! uint32_t
     integer(c_int) :: xnack = TIDAL_XNACK_NOT_APPLICABLE
     integer(c_int32_t) :: numa_node = -1
     character(kind=c_char) :: pci_bus_id(32) = achar(0)
     character(kind=c_char) :: local_cpus(128) = achar(0)
     integer(c_int64_t) :: peer_mask = 0       ! uint64_t
  end type tidal_device_info

  !> tidal_peer_info: how one device reaches another's memory.
  type, bind(C) :: tidal_peer_info
     integer(c_size_t) :: struct_size = 0
     integer(c_int32_t) :: device = 0
     integer(c_int32_t) :: peer = 0
     integer(c_int32_t) :: can_access = 0
     integer(c_int) :: link = TIDAL_LINK_UNKNOWN
     integer(c_int32_t) :: hops = -1
     integer(c_int32_t) :: performance_rank = -1
     integer(c_int32_t) :: enabled = 0
     real(c_double) :: bandwidth = 0.0_c_double
     real(c_double) :: latency_us = 0.0_c_double
  end type tidal_peer_info

  ! ---- Functions, in the header's order --------------------------------------------------
  interface
     ! unsigned tidal_version_number(void);
     function tidal_version_number() result(number) bind(C, name='tidal_version_number')
       import :: c_int
       integer(c_int) :: number                ! unsigned; the value fits a signed int
     end function tidal_version_number
  end interface

  interface
     ! const char *tidal_version_string(void);
     function tidal_version_string() result(text) bind(C, name='tidal_version_string')
       import :: c_ptr
       type(c_ptr) :: text
     end function tidal_version_string
  end interface

  interface
     ! const char *tidal_status_name(tidal_status status);
     function tidal_status_name(status) result(text) bind(C, name='tidal_status_name')
       import :: c_int, c_ptr
       integer(c_int), value :: status
       type(c_ptr) :: text
     end function tidal_status_name
  end interface

  interface
     ! const char *tidal_status_string(tidal_status status);
     function tidal_status_string(status) result(text) bind(C, name='tidal_status_string')
       import :: c_int, c_ptr
       integer(c_int), value :: status
       type(c_ptr) :: text
     end function tidal_status_string
  end interface

  interface
     ! const char *tidal_last_error(void);
     function tidal_last_error() result(text) bind(C, name='tidal_last_error')
       import :: c_ptr
       type(c_ptr) :: text
     end function tidal_last_error
  end interface

  interface
     ! tidal_status tidal_context_create(tidal_context **out);
     function tidal_context_create(out) result(status) bind(C, name='tidal_context_create')
       import :: c_int, c_ptr
       type(c_ptr), intent(out) :: out
       integer(c_int) :: status
     end function tidal_context_create
  end interface

  interface
     ! tidal_status tidal_context_create_from_file(const char *path, tidal_context **out);
     function tidal_context_create_from_file(path, out) result(status) &
          bind(C, name='tidal_context_create_from_file')
       import :: c_char, c_int, c_ptr
       character(kind=c_char), intent(in) :: path(*)   ! NUL-terminated
       type(c_ptr), intent(out) :: out
       integer(c_int) :: status
     end function tidal_context_create_from_file
  end interface

  interface
     ! tidal_status tidal_context_create_from_string(const char *toml, tidal_context **out);
     function tidal_context_create_from_string(toml, out) result(status) &
          bind(C, name='tidal_context_create_from_string')
       import :: c_char, c_int, c_ptr
       character(kind=c_char), intent(in) :: toml(*)   ! NUL-terminated
       type(c_ptr), intent(out) :: out
       integer(c_int) :: status
     end function tidal_context_create_from_string
  end interface

  interface
     ! tidal_status tidal_context_destroy(tidal_context *ctx);
     function tidal_context_destroy(ctx) result(status) bind(C, name='tidal_context_destroy')
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int) :: status
     end function tidal_context_destroy
  end interface

  interface
     ! const char *tidal_kind_name(tidal_kind kind);
     function tidal_kind_name(kind) result(text) bind(C, name='tidal_kind_name')
       import :: c_int, c_ptr
       integer(c_int), value :: kind
       type(c_ptr) :: text
     end function tidal_kind_name
  end interface

  interface
     ! tidal_status tidal_alloc(tidal_context *ctx, size_t size, const tidal_alloc_desc *desc,
     !                          void **out);
     ! desc is optional: leaving it out passes NULL (TIDAL_ALLOC_DESC_INIT's meaning).
     function tidal_alloc(ctx, size, desc, out) result(status) bind(C, name='tidal_alloc')
       import :: c_int, c_ptr, c_size_t, tidal_alloc_desc
       type(c_ptr), value :: ctx
       integer(c_size_t), value :: size
       type(tidal_alloc_desc), intent(in), optional :: desc
       type(c_ptr), intent(out) :: out
       integer(c_int) :: status
     end function tidal_alloc
  end interface

  interface
     ! tidal_status tidal_free(tidal_context *ctx, void *ptr);
     function tidal_free(ctx, ptr) result(status) bind(C, name='tidal_free')
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_int) :: status
     end function tidal_free
  end interface

  interface
     ! tidal_status tidal_alloc_async(tidal_context *ctx, size_t size,
     !                                const tidal_alloc_desc *desc, void *stream, void **out);
     ! desc is optional, as for tidal_alloc.
     function tidal_alloc_async(ctx, size, desc, stream, out) result(status) &
          bind(C, name='tidal_alloc_async')
       import :: c_int, c_ptr, c_size_t, tidal_alloc_desc
       type(c_ptr), value :: ctx
       integer(c_size_t), value :: size
       type(tidal_alloc_desc), intent(in), optional :: desc
       type(c_ptr), value :: stream
       type(c_ptr), intent(out) :: out
       integer(c_int) :: status
     end function tidal_alloc_async
  end interface

  interface
     ! tidal_status tidal_free_async(tidal_context *ctx, void *ptr, void *stream);
     function tidal_free_async(ctx, ptr, stream) result(status) bind(C, name='tidal_free_async')
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       type(c_ptr), value :: stream
       integer(c_int) :: status
     end function tidal_free_async
  end interface

  interface
     ! tidal_status tidal_pointer_query(tidal_context *ctx, const void *ptr,
     !                                  tidal_pointer_info *info);
     function tidal_pointer_query(ctx, ptr, info) result(status) &
          bind(C, name='tidal_pointer_query')
       import :: c_int, c_ptr, tidal_pointer_info
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       type(tidal_pointer_info), intent(inout) :: info  ! struct_size is read
       integer(c_int) :: status
     end function tidal_pointer_query
  end interface

  interface
     ! tidal_status tidal_prefetch(tidal_context *ctx, const void *ptr, size_t size,
     !                             int32_t device);
     function tidal_prefetch(ctx, ptr, size, device) result(status) &
          bind(C, name='tidal_prefetch')
       import :: c_int, c_int32_t, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_size_t), value :: size
       integer(c_int32_t), value :: device
       integer(c_int) :: status
     end function tidal_prefetch
  end interface

  interface
     ! tidal_status tidal_range_query(tidal_context *ctx, const void *ptr, size_t size,
     !                                tidal_range_info *info);
     function tidal_range_query(ctx, ptr, size, info) result(status) &
          bind(C, name='tidal_range_query')
       import :: c_int, c_ptr, c_size_t, tidal_range_info
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_size_t), value :: size
       type(tidal_range_info), intent(inout) :: info    ! struct_size is read
       integer(c_int) :: status
     end function tidal_range_query
  end interface

  interface
     ! tidal_status tidal_pool_stats_get(tidal_context *ctx, tidal_kind kind, int32_t device,
     !                                   tidal_pool_stats *stats);
     function tidal_pool_stats_get(ctx, kind, device, stats) result(status) &
          bind(C, name='tidal_pool_stats_get')
       import :: c_int, c_int32_t, c_ptr, tidal_pool_stats
       type(c_ptr), value :: ctx
       integer(c_int), value :: kind
       integer(c_int32_t), value :: device
       type(tidal_pool_stats), intent(inout) :: stats  ! struct_size is read
       integer(c_int) :: status
     end function tidal_pool_stats_get

     ! tidal_status tidal_pool_trim(tidal_context *ctx, uint64_t *released);
     function tidal_pool_trim(ctx, released) result(status) bind(C, name='tidal_pool_trim')
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int64_t), intent(out) :: released     ! uint64_t
       integer(c_int) :: status
     end function tidal_pool_trim
  end interface

  ! Streams are the runtime's own handles (cudaStream_t, hipStream_t) as type(c_ptr);
  ! c_null_ptr is the runtime's default stream.
  interface
     ! tidal_status tidal_stream_create(tidal_context *ctx, int32_t device, void **stream);
     function tidal_stream_create(ctx, device, stream) result(status) &
          bind(C, name='tidal_stream_create')
       import :: c_int, c_int32_t, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int32_t), value :: device
       type(c_ptr), intent(out) :: stream
       integer(c_int) :: status
     end function tidal_stream_create
  end interface

  interface
     ! tidal_status tidal_stream_destroy(tidal_context *ctx, void *stream);
     function tidal_stream_destroy(ctx, stream) result(status) &
          bind(C, name='tidal_stream_destroy')
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), value :: stream
       integer(c_int) :: status
     end function tidal_stream_destroy
  end interface

  interface
     ! tidal_status tidal_stream_forget(tidal_context *ctx, void *stream);
     function tidal_stream_forget(ctx, stream) result(status) &
          bind(C, name='tidal_stream_forget')
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), value :: stream
       integer(c_int) :: status
     end function tidal_stream_forget
  end interface

  interface
     ! tidal_status tidal_stream_synchronize(tidal_context *ctx, void *stream);
     function tidal_stream_synchronize(ctx, stream) result(status) &
          bind(C, name='tidal_stream_synchronize')
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), value :: stream
       integer(c_int) :: status
     end function tidal_stream_synchronize
  end interface

  interface
     ! tidal_status tidal_copy(tidal_context *ctx, void *dst, const void *src, size_t size);
     function tidal_copy(ctx, dst, src, size) result(status) bind(C, name='tidal_copy')
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: dst
       type(c_ptr), value :: src
       integer(c_size_t), value :: size
       integer(c_int) :: status
     end function tidal_copy
  end interface

  interface
     ! tidal_status tidal_copy_async(tidal_context *ctx, void *dst, const void *src,
     !                               size_t size, void *stream);
     function tidal_copy_async(ctx, dst, src, size, stream) result(status) &
          bind(C, name='tidal_copy_async')
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: dst
       type(c_ptr), value :: src
       integer(c_size_t), value :: size
       type(c_ptr), value :: stream
       integer(c_int) :: status
     end function tidal_copy_async
  end interface

  interface
     ! tidal_status tidal_copy_batch(tidal_context *ctx, const tidal_copy_item *items,
     !                               size_t count, void *stream);
     ! count 0 copies nothing (items is then not read).
     function tidal_copy_batch(ctx, items, count, stream) result(status) &
          bind(C, name='tidal_copy_batch')
       import :: c_int, c_ptr, c_size_t, tidal_copy_item
       type(c_ptr), value :: ctx
       type(tidal_copy_item), intent(in) :: items(*)
       integer(c_size_t), value :: count
       type(c_ptr), value :: stream
       integer(c_int) :: status
     end function tidal_copy_batch
  end interface

  interface
     ! tidal_status tidal_register(tidal_context *ctx, void *ptr, size_t size);
     function tidal_register(ctx, ptr, size) result(status) bind(C, name='tidal_register')
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_size_t), value :: size
       integer(c_int) :: status
     end function tidal_register
  end interface

  interface
     ! tidal_status tidal_unregister(tidal_context *ctx, void *ptr);
     function tidal_unregister(ctx, ptr) result(status) bind(C, name='tidal_unregister')
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_int) :: status
     end function tidal_unregister
  end interface

  interface
     ! tidal_status tidal_check_run(tidal_context *ctx, tidal_check *check);
     function tidal_check_run(ctx, check) result(status) bind(C, name='tidal_check_run')
       import :: c_int, c_ptr, tidal_check
       type(c_ptr), value :: ctx
       type(tidal_check), intent(inout) :: check
       integer(c_int) :: status
     end function tidal_check_run
  end interface

  ! ---- Advice, access declarations, budgets, the runtime's clock ------------------------
  interface
     ! tidal_status tidal_advise(tidal_context *ctx, const void *ptr, size_t size, uint32_t set,
     !                           uint32_t unset);
     function tidal_advise(ctx, ptr, size, set, unset) result(status) &
          bind(C, name='tidal_advise')
       import :: c_int, c_int32_t, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_size_t), value :: size
       integer(c_int32_t), value :: set               ! uint32_t, TIDAL_ADVICE_*
       integer(c_int32_t), value :: unset             ! uint32_t, TIDAL_ADVICE_*
       integer(c_int) :: status
     end function tidal_advise
  end interface

  interface
     ! tidal_status tidal_declare(tidal_context *ctx, void *stream, const tidal_access *accesses,
     !                            size_t count, uint32_t flags);
     ! count 0 just ends the stream's phase (accesses is then not read).
     function tidal_declare(ctx, stream, accesses, count, flags) result(status) &
          bind(C, name='tidal_declare')
       import :: c_int, c_int32_t, c_ptr, c_size_t, tidal_access
       type(c_ptr), value :: ctx
       type(c_ptr), value :: stream
       type(tidal_access), intent(in) :: accesses(*)
       integer(c_size_t), value :: count
       integer(c_int32_t), value :: flags             ! uint32_t, TIDAL_DECLARE_*
       integer(c_int) :: status
     end function tidal_declare
  end interface

  interface
     ! tidal_status tidal_budget_set(tidal_context *ctx, int32_t device, uint64_t bytes);
     function tidal_budget_set(ctx, device, bytes) result(status) &
          bind(C, name='tidal_budget_set')
       import :: c_int, c_int32_t, c_int64_t, c_ptr
       type(c_ptr), value :: ctx
       integer(c_int32_t), value :: device
       integer(c_int64_t), value :: bytes             ! uint64_t; 0 removes the limit
       integer(c_int) :: status
     end function tidal_budget_set
  end interface

  interface
     ! tidal_status tidal_migration_stats_get(tidal_context *ctx, int32_t device,
     !                                        tidal_migration_stats *stats);
     function tidal_migration_stats_get(ctx, device, stats) result(status) &
          bind(C, name='tidal_migration_stats_get')
       import :: c_int, c_int32_t, c_ptr, tidal_migration_stats
       type(c_ptr), value :: ctx
       integer(c_int32_t), value :: device
       type(tidal_migration_stats), intent(inout) :: stats ! struct_size is read
       integer(c_int) :: status
     end function tidal_migration_stats_get
  end interface

  interface
     ! tidal_status tidal_clock(tidal_context *ctx, double *seconds);
     function tidal_clock(ctx, seconds) result(status) bind(C, name='tidal_clock')
       import :: c_double, c_int, c_ptr
       type(c_ptr), value :: ctx
       real(c_double), intent(out) :: seconds
       integer(c_int) :: status
     end function tidal_clock
  end interface


  interface
     ! tidal_status tidal_offload(tidal_context *ctx, const char *tag_glob, uint32_t flags,
     !                         void *stream, tidal_elastic_result *out);
     function tidal_offload(ctx, tag_glob, flags, stream, out) result(status) bind(C, name='tidal_offload')
       import :: c_char, c_int, c_int32_t, c_ptr, tidal_elastic_result
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(in) :: tag_glob(*) ! NUL-terminated
       integer(c_int32_t), value :: flags
       type(c_ptr), value :: stream
       type(tidal_elastic_result), intent(inout) :: out   ! struct_size is read
       integer(c_int) :: status
     end function tidal_offload
  end interface

  interface
     ! tidal_status tidal_offload_range(tidal_context *ctx, void *ptr, size_t size, uint32_t flags,
     !                               void *stream, tidal_elastic_result *out);
     function tidal_offload_range(ctx, ptr, size, flags, stream, out) result(status) &
          bind(C, name='tidal_offload_range')
       import :: c_int, c_int32_t, c_ptr, c_size_t, tidal_elastic_result
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_size_t), value :: size
       integer(c_int32_t), value :: flags
       type(c_ptr), value :: stream
       type(tidal_elastic_result), intent(inout) :: out   ! struct_size is read
       integer(c_int) :: status
     end function tidal_offload_range
  end interface

  interface
     ! tidal_status tidal_restore(tidal_context *ctx, const char *tag_glob, uint32_t flags,
     !                         void *stream, tidal_elastic_result *out);
     function tidal_restore(ctx, tag_glob, flags, stream, out) result(status) bind(C, name='tidal_restore')
       import :: c_char, c_int, c_int32_t, c_ptr, tidal_elastic_result
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(in) :: tag_glob(*) ! NUL-terminated
       integer(c_int32_t), value :: flags
       type(c_ptr), value :: stream
       type(tidal_elastic_result), intent(inout) :: out   ! struct_size is read
       integer(c_int) :: status
     end function tidal_restore
  end interface

  interface
     ! tidal_status tidal_restore_range(tidal_context *ctx, void *ptr, size_t size, uint32_t flags,
     !                               void *stream, tidal_elastic_result *out);
     function tidal_restore_range(ctx, ptr, size, flags, stream, out) result(status) &
          bind(C, name='tidal_restore_range')
       import :: c_int, c_int32_t, c_ptr, c_size_t, tidal_elastic_result
       type(c_ptr), value :: ctx
       type(c_ptr), value :: ptr
       integer(c_size_t), value :: size
       integer(c_int32_t), value :: flags
       type(c_ptr), value :: stream
       type(tidal_elastic_result), intent(inout) :: out   ! struct_size is read
       integer(c_int) :: status
     end function tidal_restore_range
  end interface

  interface
     ! tidal_status tidal_peer_info_get(tidal_context *ctx, int32_t device, int32_t peer,
     !                                  tidal_peer_info *info);
     function tidal_peer_info_get(ctx, device, peer, info) result(status) &
          bind(C, name='tidal_peer_info_get')
       import :: c_int, c_int32_t, c_ptr, tidal_peer_info
       type(c_ptr), value :: ctx
       integer(c_int32_t), value :: device
       integer(c_int32_t), value :: peer
       type(tidal_peer_info), intent(inout) :: info  ! struct_size is read
       integer(c_int) :: status
     end function tidal_peer_info_get
  end interface

  interface
     ! tidal_status tidal_system_info_get(tidal_context *ctx, tidal_system_info *info);
     function tidal_system_info_get(ctx, info) result(status) &
          bind(C, name='tidal_system_info_get')
       import :: c_int, c_ptr, tidal_system_info
       type(c_ptr), value :: ctx
       type(tidal_system_info), intent(inout) :: info  ! struct_size is read
       integer(c_int) :: status
     end function tidal_system_info_get
  end interface

  interface
     ! tidal_status tidal_device_info_get(tidal_context *ctx, int32_t device,
     !                                    tidal_device_info *info);
     function tidal_device_info_get(ctx, device, info) result(status) &
          bind(C, name='tidal_device_info_get')
       import :: c_int, c_int32_t, c_ptr, tidal_device_info
       type(c_ptr), value :: ctx
       integer(c_int32_t), value :: device
       type(tidal_device_info), intent(inout) :: info  ! struct_size is read
       integer(c_int) :: status
     end function tidal_device_info_get
  end interface

  interface
     ! tidal_status tidal_config_describe(tidal_context *ctx, char *buf, size_t capacity,
     !                                    size_t *needed);
     ! buf may be c_null_ptr with capacity 0 to learn the length first; needed is optional
     ! (left out, NULL is passed).
     function tidal_config_describe(ctx, buf, capacity, needed) result(status) &
          bind(C, name='tidal_config_describe')
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: buf
       integer(c_size_t), value :: capacity
       integer(c_size_t), intent(out), optional :: needed
       integer(c_int) :: status
     end function tidal_config_describe

     ! tidal_status tidal_file_name_expand(const char *pattern, char *buf, size_t capacity,
     !                                     size_t *needed);
     ! pattern: a NUL-terminated string (trim(name)//c_null_char).
     function tidal_file_name_expand(pattern, buf, capacity, needed) result(status) &
          bind(C, name='tidal_file_name_expand')
       import :: c_int, c_ptr, c_size_t, c_char
       character(kind=c_char), intent(in) :: pattern(*)
       type(c_ptr), value :: buf
       integer(c_size_t), value :: capacity
       integer(c_size_t), intent(out), optional :: needed
       integer(c_int) :: status
     end function tidal_file_name_expand
  end interface

  ! ---- Telemetry: statistics snapshot, live allocations -----------------------------------
  interface
     ! tidal_status tidal_stats_json(tidal_context *ctx, char *buf, size_t capacity,
     !                               size_t *needed);
     ! As tidal_config_describe: buf may be c_null_ptr with capacity 0 to learn the length.
     function tidal_stats_json(ctx, buf, capacity, needed) result(status) &
          bind(C, name='tidal_stats_json')
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: buf
       integer(c_size_t), value :: capacity
       integer(c_size_t), intent(out), optional :: needed
       integer(c_int) :: status
     end function tidal_stats_json
  end interface

  interface
     ! tidal_status tidal_allocations_list(tidal_context *ctx, tidal_pointer_info *infos,
     !                                     size_t capacity, size_t *count);
     ! infos(1)%struct_size must be set; infos may be c_null_ptr with capacity 0.
     function tidal_allocations_list(ctx, infos, capacity, count) result(status) &
          bind(C, name='tidal_allocations_list')
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       type(c_ptr), value :: infos
       integer(c_size_t), value :: capacity
       integer(c_size_t), intent(out) :: count
       integer(c_int) :: status
     end function tidal_allocations_list
  end interface
end module tidal_c

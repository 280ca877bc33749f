! tidal — the Fortran API. `use tidal` is all an application needs.
!
!   use tidal
!   type(tidal_ctx) :: ctx
!   real(real64), pointer :: a(:,:) => null()
!   integer :: status
!   call tidal_init(ctx, status)
!   call tidal_allocate(ctx, a, [n, m], status, kind=TIDAL_KIND_MANAGED, tag='a')
!   if (status /= TIDAL_OK) print *, tidal_last_error_message()
!   ...
!   call tidal_deallocate(ctx, a, status)
!   call tidal_finalize(ctx, status)
!
! Rules every procedure keeps:
!  - the last argument but the optional ones is `integer, intent(out) :: status`: TIDAL_OK or
!    one of the TIDAL_ERROR_* numbers of the C ABI. Nothing here stops the program;
!    tidal_last_error_message() gives the detailed text of this thread's newest failure and
!    tidal_status_message(status) a short description of any status;
!  - arrays come from tidal_allocate as pointer arrays (Fortran cannot point an allocatable
!    at foreign memory); tidal_deallocate frees them and nullifies the pointer;
!  - prefetch, advice, access declarations and query take arrays of any type and rank
!    directly, sections included;
!  - strings go in as Fortran strings (trailing blanks of names and paths are dropped) and
!    come back as character(len=:), allocatable.
! This module re-exports the named constants of tidal_constants. The raw C interfaces stay in
! tidal_c; `use tidal_c` alongside `use tidal` only when calling the C functions themselves.
module tidal
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int, c_int32_t, c_int64_t, c_loc, &
                                         c_null_ptr, c_ptr, c_size_t, c_sizeof
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
  use tidal_constants
  use tidal_c, only: tidal_context_create, tidal_context_create_from_file, &
                     tidal_context_create_from_string, tidal_context_destroy, &
                     tidal_pointer_query, &
                     tidal_pointer_info, tidal_range_query, tidal_range_info, &
                     tidal_system_info_get, tidal_system_info, tidal_device_info_get, &
                     tidal_device_info, tidal_config_describe, tidal_status_name, &
                     tidal_status_string, tidal_kind_name, tidal_access, &
                     tidal_migration_stats, tidal_copy_item, tidal_elastic_result, &
                     tidal_peer_info, tidal_peer_info_get, &
                     c_tidal_version_string => tidal_version_string
  use tidal_base, only: tidal_ctx, tidal_from_c, tidal_fail, tidal_has_context, &
                        tidal_c_string, tidal_f_string, tidal_f_chars, tidal_array_span, &
                        tidal_pending_error
  use tidal_arrays, only: tidal_allocate, tidal_deallocate
  implicit none
  private
  public :: tidal_ctx, tidal_array_info, tidal_range, tidal_system, tidal_device
  ! The C structs themselves (module tidal_c's bind(C) types, the same entities): the
  ! procedures below fill in struct_size.
  public :: tidal_access, tidal_migration_stats, tidal_copy_item, tidal_elastic_result
  ! The peer matrix, straight from C: set peer%struct_size = c_sizeof(peer) first.
  public :: tidal_peer_info, tidal_peer_info_get
  public :: tidal_init, tidal_finalize, tidal_allocate, tidal_deallocate, tidal_prefetch, &
            tidal_query, tidal_query_range, tidal_advise, tidal_access_of, tidal_declare, &
            tidal_budget_set, tidal_migration_stats_get, tidal_clock, &
            tidal_copy_item_of, tidal_copy_batch, &
            tidal_offload, tidal_offload_range, tidal_restore, tidal_restore_range, &
            tidal_get_system, tidal_get_device, &
            tidal_config_text, tidal_status_message, tidal_last_error_message, &
            tidal_get_status_message, tidal_get_last_error, tidal_kind_string, tidal_version
  ! The constants, as if declared here.
  public :: TIDAL_VERSION_MAJOR, TIDAL_VERSION_MINOR, TIDAL_VERSION_PATCH, &
            TIDAL_VERSION_NUMBER, TIDAL_VERSION_STRING, TIDAL_ABI_VERSION
  public :: TIDAL_OK, TIDAL_ERROR_INVALID_ARGUMENT, TIDAL_ERROR_OUT_OF_MEMORY, &
            TIDAL_ERROR_NOT_SUPPORTED, TIDAL_ERROR_NO_DEVICE, TIDAL_ERROR_UNKNOWN_POINTER, &
            TIDAL_ERROR_CONFIG, TIDAL_ERROR_PLUGIN, TIDAL_ERROR_RUNTIME, &
            TIDAL_ERROR_BUDGET_EXCEEDED, TIDAL_ERROR_ILLEGAL_ACCESS, TIDAL_ERROR_INTERNAL, &
            TIDAL_ERROR_NOT_FOUND, TIDAL_ERROR_BUFFER_TOO_SMALL
  public :: TIDAL_KIND_AUTO, TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED, &
            TIDAL_KIND_PAGEABLE, TIDAL_KIND_DEVICE_FINE, TIDAL_KIND_MANAGED_COARSE, &
            TIDAL_KIND_ELASTIC, TIDAL_KIND_COUNT
  public :: TIDAL_HINT_READ_MOSTLY, TIDAL_HINT_HOST_READ, TIDAL_HINT_HOST_WRITE, &
            TIDAL_HINT_DEVICE_ONLY, TIDAL_HINT_STREAMING, TIDAL_HINT_TEMPORARY, TIDAL_HINT_ALL
  public :: TIDAL_ADVICE_READ_MOSTLY, TIDAL_ADVICE_PREFERRED_DEVICE, &
            TIDAL_ADVICE_PREFERRED_HOST, TIDAL_ADVICE_ACCESSED_BY_DEVICE, &
            TIDAL_ADVICE_COARSE_GRAIN, TIDAL_ADVICE_ALL
  public :: TIDAL_DEVICE_DEFAULT, TIDAL_DEVICE_HOST, TIDAL_LOCATION_NONE, TIDAL_TAG_MAX
  public :: TIDAL_COHERENCY_UNKNOWN, TIDAL_COHERENCY_FINE, TIDAL_COHERENCY_COARSE, &
            TIDAL_COHERENCY_INDETERMINATE
  public :: TIDAL_CHECK_TOUCH_READ, TIDAL_CHECK_TOUCH_WRITE, TIDAL_CHECK_PATTERN_FILL, &
            TIDAL_CHECK_PATTERN_VERIFY, TIDAL_CHECK_COPY, TIDAL_CHECK_TRIAD, &
            TIDAL_CHECK_ATOMIC_ADD, TIDAL_CHECK_RUNTIME_COPY, TIDAL_CHECK_SPIN
  public :: TIDAL_CHECK_ATOMIC_SET, TIDAL_CHECK_ATOMIC_SET_SHARED
  public :: TIDAL_ATOMIC_AND32, TIDAL_ATOMIC_OR32, TIDAL_ATOMIC_XOR32, TIDAL_ATOMIC_ADD32, TIDAL_ATOMIC_SUB32, &
            TIDAL_ATOMIC_MIN32, TIDAL_ATOMIC_MAX32, TIDAL_ATOMIC_EXCH32, TIDAL_ATOMIC_CAS32, TIDAL_ATOMIC_AND64, &
            TIDAL_ATOMIC_OR64, TIDAL_ATOMIC_XOR64, TIDAL_ATOMIC_ADD64, TIDAL_ATOMIC_SUB64, TIDAL_ATOMIC_MIN64, &
            TIDAL_ATOMIC_MAX64, TIDAL_ATOMIC_EXCH64, TIDAL_ATOMIC_CAS64, TIDAL_ATOMIC_FADD32, TIDAL_ATOMIC_ALL, &
            TIDAL_ATOMIC_SET_BYTES
  public :: TIDAL_XNACK_NOT_APPLICABLE, TIDAL_XNACK_ON, TIDAL_XNACK_OFF, TIDAL_XNACK_UNKNOWN
  public :: TIDAL_LINK_UNKNOWN, TIDAL_LINK_SAME, TIDAL_LINK_PCIE, &
            TIDAL_LINK_XGMI, TIDAL_LINK_NVLINK, TIDAL_LINK_NONE
  public :: TIDAL_DEVICE_FLAG_SIMULATED, TIDAL_DEVICE_FLAG_MANAGED, &
            TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED, TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS, &
            TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT, TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS, &
            TIDAL_DEVICE_FLAG_FINE_GRAINED
  public :: TIDAL_ACCESS_READ, TIDAL_ACCESS_WRITE, TIDAL_ACCESS_READ_WRITE, &
            TIDAL_DECLARE_LOOKAHEAD, TIDAL_DECLARE_FLAGS_ALL
  public :: TIDAL_OFFLOAD_DISCARD, TIDAL_OFFLOAD_KEEP_PHYSICAL, TIDAL_OFFLOAD_FLAGS_ALL, &
            TIDAL_RESTORE_READ_ONLY, TIDAL_RESTORE_FLAGS_ALL

  !> What tidal knows about the allocation an array lies in (tidal_query).
  type :: tidal_array_info
     integer :: kind = TIDAL_KIND_AUTO        ! where it was placed (never AUTO once queried)
     integer :: device = TIDAL_DEVICE_HOST    ! device index, or TIDAL_DEVICE_HOST
     integer(int64) :: size = 0               ! bytes of the whole allocation
     integer(int64) :: alignment = 0          ! alignment guaranteed for base
     integer :: hints = 0                     ! TIDAL_HINT_* as given
     integer :: advice = 0                    ! TIDAL_ADVICE_* applied
     character(len=:), allocatable :: tag     ! "" when untagged
     character(len=:), allocatable :: placed_by ! the policy that decided, or "core"
     type(c_ptr) :: base = c_null_ptr         ! the allocation's first byte
     ! Elastic memory (0 for other kinds), in bytes of whole chunks:
     integer(int64) :: resident_bytes = 0     ! mapped on the device
     integer(int64) :: offloaded_bytes = 0    ! not mapped; the contents are in the host home
     integer(int64) :: discarded_bytes = 0    ! not mapped; the contents were dropped
  end type tidal_array_info

  !> The device runtime's own view of a managed range (tidal_query_range).
  type :: tidal_range
     integer :: last_prefetch_location = TIDAL_LOCATION_NONE ! device, HOST or LOCATION_NONE
     integer :: preferred_location = TIDAL_LOCATION_NONE     ! device, HOST or LOCATION_NONE
     logical :: read_mostly = .false.
     integer :: coherency = TIDAL_COHERENCY_UNKNOWN
     ! Elastic memory (0 for managed memory): bytes of the chunks the array touches.
     integer(int64) :: resident_bytes = 0
     integer(int64) :: offloaded_bytes = 0
     integer(int64) :: discarded_bytes = 0
  end type tidal_range

  !> tidal_budget_set(ctx, device, bytes, status): bytes as int64 or default integer.
  interface tidal_budget_set
     module procedure :: tidal_budget_set_i64, tidal_budget_set_i32
  end interface tidal_budget_set

  !> The runtime in use (tidal_get_system).
  type :: tidal_system
     character(len=:), allocatable :: runtime        ! "sim", "hip" or "cuda"
     character(len=:), allocatable :: runtime_detail
     integer :: device_count = 0
     integer :: default_device = TIDAL_DEVICE_DEFAULT ! an index with device_selection = "local-rank"
     integer :: local_rank = -1                       ! from the launcher's environment, -1: none
     integer :: rank = -1
  end type tidal_system

  !> One device's capabilities (tidal_get_device).
  type :: tidal_device
     integer :: index = 0
     character(len=:), allocatable :: name
     character(len=:), allocatable :: arch
     integer(int64) :: total_memory = 0
     integer(int64) :: free_memory = 0
     integer(int64) :: page_size = 0      ! migration granularity of managed memory
     integer(int64) :: l2_size = 0        ! 0 when unknown
     integer :: flags = 0                 ! TIDAL_DEVICE_FLAG_*
     integer :: xnack = TIDAL_XNACK_NOT_APPLICABLE
     integer :: numa_node = -1            ! -1 when unknown
  end type tidal_device

contains

  !> Creates a context. Without config_file or config_string: from the file named by
  !! $TIDAL_CONFIG, or built-in defaults. config_string is TOML text (separate lines with
  !! new_line('a')); config_file a TOML file. Giving both is INVALID_ARGUMENT.
  subroutine tidal_init(ctx, status, config_file, config_string)
    type(tidal_ctx), intent(out) :: ctx
    integer, intent(out) :: status
    character(len=*), intent(in), optional :: config_file
    character(len=*), intent(in), optional :: config_string
    ctx%handle = c_null_ptr
    if (present(config_file) .and. present(config_string)) then
       call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, &
            'tidal_init: give config_file or config_string, not both')
    else if (present(config_file)) then
       call tidal_from_c(tidal_context_create_from_file(tidal_c_string(trim(config_file)), &
                                                        ctx%handle), status)
    else if (present(config_string)) then
       call tidal_from_c(tidal_context_create_from_string(tidal_c_string(config_string), &
                                                          ctx%handle), status)
    else
       call tidal_from_c(tidal_context_create(ctx%handle), status)
    end if
    if (status /= TIDAL_OK) ctx%handle = c_null_ptr
  end subroutine tidal_init

  !> Ends a context: every allocation still live is freed (and reported as a leak on the log),
  !! so pointer arrays from it must not be used afterwards. An uninitialised ctx is accepted.
  subroutine tidal_finalize(ctx, status)
    type(tidal_ctx), intent(inout) :: ctx
    integer, intent(out) :: status
    call tidal_from_c(tidal_context_destroy(ctx%handle), status)
    ctx%handle = c_null_ptr
  end subroutine tidal_finalize

  !> Makes the memory of `array` (any type and rank, a section too) resident on `device` (an
  !! index) or on the host (TIDAL_DEVICE_HOST), and waits. Managed memory moves; other kinds
  !! stay where they are and the call still succeeds. A strided section prefetches the span
  !! from its lowest to its highest element.
  subroutine tidal_prefetch(ctx, array, device, status)
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    integer, intent(in) :: device
    integer, intent(out) :: status
    type(c_ptr) :: lowest
    integer(c_size_t) :: bytes
    if (.not. tidal_has_context(ctx, 'tidal_prefetch', status)) return
    if (.not. array_has_elements(array, 'tidal_prefetch', lowest, bytes, status)) return
    call tidal_from_c(prefetch_bytes(ctx%handle, lowest, bytes, int(device, c_int32_t)), &
                      status)
  end subroutine tidal_prefetch

  ! The C call behind tidal_prefetch. Its interface is imported here, inside one procedure,
  ! and not at module level: gfortran 12 warns ("'tidal_prefetch' is not a function") when a
  ! module both sees a bind(C) interface labelled tidal_prefetch and defines a procedure of
  ! that name, and this module must define the Fortran tidal_prefetch.
  integer function prefetch_bytes(handle, lowest, bytes, device) result(status)
    use tidal_c, only: c_prefetch => tidal_prefetch
    type(c_ptr), intent(in) :: handle, lowest
    integer(c_size_t), intent(in) :: bytes
    integer(c_int32_t), intent(in) :: device
    status = c_prefetch(handle, lowest, bytes, device)
  end function prefetch_bytes

  !> What tidal knows about the allocation `array` lies in (any type and rank; a section or a
  !! single element names the allocation containing it).
  subroutine tidal_query(ctx, array, info, status)
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    type(tidal_array_info), intent(out) :: info
    integer, intent(out) :: status
    type(tidal_pointer_info) :: raw
    type(c_ptr) :: lowest
    integer(c_size_t) :: bytes
    info%tag = ''
    info%placed_by = ''
    if (.not. tidal_has_context(ctx, 'tidal_query', status)) return
    if (.not. array_has_elements(array, 'tidal_query', lowest, bytes, status)) return
    raw%struct_size = c_sizeof(raw)
    call tidal_from_c(tidal_pointer_query(ctx%handle, lowest, raw), status)
    if (status /= TIDAL_OK) return
    info%kind = raw%kind
    info%device = raw%device
    info%size = int(raw%size, int64)
    info%alignment = int(raw%alignment, int64)
    info%hints = raw%hints
    info%advice = raw%advice
    call tidal_f_chars(raw%tag, info%tag)
    call tidal_f_chars(raw%placed_by, info%placed_by)
    info%base = raw%base
    info%resident_bytes = raw%resident_bytes
    info%offloaded_bytes = raw%offloaded_bytes
    info%discarded_bytes = raw%discarded_bytes
  end subroutine tidal_query

  !> The device runtime's own view of the managed memory `array` covers; for elastic memory,
  !! the resident, offloaded and discarded bytes of the chunks it touches (the locations stay
  !! TIDAL_LOCATION_NONE). NOT_SUPPORTED for memory that is neither managed nor elastic.
  subroutine tidal_query_range(ctx, array, range, status)
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    type(tidal_range), intent(out) :: range
    integer, intent(out) :: status
    type(tidal_range_info) :: raw
    type(c_ptr) :: lowest
    integer(c_size_t) :: bytes
    if (.not. tidal_has_context(ctx, 'tidal_query_range', status)) return
    if (.not. array_has_elements(array, 'tidal_query_range', lowest, bytes, status)) return
    raw%struct_size = c_sizeof(raw)
    call tidal_from_c(tidal_range_query(ctx%handle, lowest, bytes, raw), status)
    if (status /= TIDAL_OK) return
    range%last_prefetch_location = raw%last_prefetch_location
    range%preferred_location = raw%preferred_location
    range%read_mostly = raw%read_mostly /= 0
    range%coherency = raw%coherency
    range%resident_bytes = raw%resident_bytes
    range%offloaded_bytes = raw%offloaded_bytes
    range%discarded_bytes = raw%discarded_bytes
  end subroutine tidal_query_range

  ! ---- Advice, access declarations, budgets, the runtime's clock ------------------------
  ! The C functions behind these share their names, so each is imported inside the procedure
  ! that calls it, renamed (see prefetch_bytes for why not at module level).

  !> Sets the TIDAL_ADVICE_* bits `set` and clears the bits `unset` (ior() of bits, or 0) on
  !! the managed memory of `array` (any type and rank, a section too: a strided section
  !! covers the span from its lowest to its highest element, as for tidal_prefetch).
  !! PREFERRED_DEVICE and ACCESSED_BY_DEVICE name the allocation's device. Memory of other
  !! kinds takes no advice and the call still succeeds. INVALID_ARGUMENT for unknown bits or a
  !! bit both set and unset; NOT_SUPPORTED for COARSE_GRAIN off AMD.
  subroutine tidal_advise(ctx, array, set, unset, status)
    use tidal_c, only: c_advise => tidal_advise
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    integer, intent(in) :: set, unset
    integer, intent(out) :: status
    type(c_ptr) :: lowest
    integer(c_size_t) :: bytes
    if (.not. tidal_has_context(ctx, 'tidal_advise', status)) return
    if (.not. array_has_elements(array, 'tidal_advise', lowest, bytes, status)) return
    call tidal_from_c(c_advise(ctx%handle, lowest, bytes, int(set, c_int32_t), &
                               int(unset, c_int32_t)), status)
  end subroutine tidal_advise

  !> One entry of a declaration: the memory of `array` (any type and rank, sections too, the
  !! span from its lowest to its highest element) will be touched by work of `device` (an
  !! index, or TIDAL_DEVICE_HOST) in `mode` (TIDAL_ACCESS_READ, _WRITE or _READ_WRITE).
  !! A function, so that one phase's arrays fit in an array constructor:
  !!   call tidal_declare(ctx, stream, [tidal_access_of(a, 0, TIDAL_ACCESS_READ), &
  !!                                    tidal_access_of(b, 0, TIDAL_ACCESS_WRITE)], status)
  !! It records the array's address and checks nothing (it has no status): tidal_declare
  !! reports an empty array, a bad mode or a device that does not exist. Pass the array itself,
  !! not an expression: an expression's temporary is not tidal memory (UNKNOWN_POINTER).
  function tidal_access_of(array, device, mode) result(access)
    type(*), dimension(..), intent(in) :: array
    integer, intent(in) :: device
    integer, intent(in) :: mode
    type(tidal_access) :: access
    call tidal_array_span(array, access%ptr, access%size)
    access%struct_size = c_sizeof(access)
    access%device = int(device, c_int32_t)
    access%mode = int(mode, c_int32_t)
  end function tidal_access_of

  !> Starts a phase of work on `stream` (a cudaStream_t / hipStream_t as type(c_ptr);
  !! c_null_ptr is the default stream): the managed memory named by `accesses` (entries from
  !! tidal_access_of) is made resident on its device, and `stream` is ordered after those
  !! moves without blocking the host; the previous phase's ranges stay protected from
  !! eviction until the stream has run what was queued before. With lookahead=.true. the
  !! entries belong to the stream's NEXT phase: their migration starts now, ordering nothing.
  !! No entries (`[tidal_access ::]`) just ends the phase. Memory that cannot move is a
  !! counted no-op. Errors: INVALID_ARGUMENT (an entry with no elements, a bad mode; C's
  !! messages number entries from 0, so "access 0" is accesses(1)), UNKNOWN_POINTER,
  !! NOT_FOUND (device), BUDGET_EXCEEDED (nothing of this declaration moved).
  subroutine tidal_declare(ctx, stream, accesses, status, lookahead)
    use tidal_c, only: c_declare => tidal_declare
    type(tidal_ctx), intent(in) :: ctx
    type(c_ptr), intent(in) :: stream
    type(tidal_access), intent(in) :: accesses(:)
    integer, intent(out) :: status
    logical, intent(in), optional :: lookahead
    type(tidal_access), allocatable :: raw(:)
    integer(c_int32_t) :: flags
    character(len=24) :: which
    integer :: i, n
    if (.not. tidal_has_context(ctx, 'tidal_declare', status)) return
    ! A contiguous copy with one struct_size throughout, as the C call requires; entries
    ! built by hand (type(tidal_access) with its components set) need not set struct_size.
    ! At least one element: with count 0 the C call reads none, but gets a valid address.
    n = size(accesses)
    allocate(raw(max(n, 1)))
    raw(1:n) = accesses
    do i = 1, n
       if (raw(i)%size == 0) then
          write (which, '(i0)') i
          call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_declare: accesses(' // &
               trim(which) // ') names no memory (an array with no elements, or an entry ' // &
               'not made by tidal_access_of)')
          return
       end if
       raw(i)%struct_size = c_sizeof(raw(i))
    end do
    flags = 0
    if (present(lookahead)) then
       if (lookahead) flags = TIDAL_DECLARE_LOOKAHEAD
    end if
    call tidal_from_c(c_declare(ctx%handle, stream, raw, int(n, c_size_t), flags), status)
  end subroutine tidal_declare

  !> Limits the managed bytes tidal keeps resident on `device` (as [migration] budget in the
  !! configuration); 0 removes the limit. A lower budget takes effect at the next declaration
  !! or prefetch, which evicts first. NOT_FOUND for a bad device, INVALID_ARGUMENT for a
  !! negative `bytes`. Generic: `bytes` is int64 or default integer.
  subroutine tidal_budget_set_i64(ctx, device, bytes, status)
    use tidal_c, only: c_budget_set => tidal_budget_set
    type(tidal_ctx), intent(in) :: ctx
    integer, intent(in) :: device
    integer(int64), intent(in) :: bytes
    integer, intent(out) :: status
    character(len=24) :: text
    if (.not. tidal_has_context(ctx, 'tidal_budget_set', status)) return
    if (bytes < 0) then
       write (text, '(i0)') bytes
       call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_budget_set: bytes is ' // &
            'negative (' // trim(text) // '); 0 removes the limit')
       return
    end if
    call tidal_from_c(c_budget_set(ctx%handle, int(device, c_int32_t), int(bytes, c_int64_t)), &
                      status)
  end subroutine tidal_budget_set_i64

  subroutine tidal_budget_set_i32(ctx, device, bytes, status)
    type(tidal_ctx), intent(in) :: ctx
    integer, intent(in) :: device
    integer(int32), intent(in) :: bytes
    integer, intent(out) :: status
    call tidal_budget_set_i64(ctx, device, int(bytes, int64), status)
  end subroutine tidal_budget_set_i32

  !> What the migration scheduler did on `device` (type(tidal_migration_stats): budget,
  !! resident_bytes, declared_ranges, migrated_bytes, evictions, ... as int64). NOT_FOUND for a
  !! bad device.
  subroutine tidal_migration_stats_get(ctx, device, stats, status)
    use tidal_c, only: c_migration_stats_get => tidal_migration_stats_get
    type(tidal_ctx), intent(in) :: ctx
    integer, intent(in) :: device
    type(tidal_migration_stats), intent(out) :: stats
    integer, intent(out) :: status
    stats%struct_size = c_sizeof(stats)
    if (.not. tidal_has_context(ctx, 'tidal_migration_stats_get', status)) return
    call tidal_from_c(c_migration_stats_get(ctx%handle, int(device, c_int32_t), stats), status)
  end subroutine tidal_migration_stats_get

  !> Seconds on the runtime's clock: the host's monotonic clock on GPU runtimes; on the
  !! simulated device its simulated clock, so one program times a GPU and predicts the same
  !! run on a profile.
  !> One copy of a batch: all of `src` into `dst` (arrays of any type and rank, contiguous,
  !! of the same size in bytes). A function, so that a batch fits in an array constructor:
  !!   call tidal_copy_batch(ctx, [tidal_copy_item_of(d(:, 1), h(:, 1)), &
  !!                               tidal_copy_item_of(d(:, 7), h(:, 2))], status)
  !! It has no status: an entry whose arrays differ in bytes or are not contiguous is marked
  !! (struct_size 0) and tidal_copy_batch reports it. Pass the arrays themselves, not
  !! expressions: a temporary would be copied from or into instead.
  function tidal_copy_item_of(dst, src) result(item)
    type(*), dimension(..), intent(in) :: dst
    type(*), dimension(..), intent(in) :: src
    type(tidal_copy_item) :: item
    integer(c_size_t) :: src_bytes
    call tidal_array_span(dst, item%dst, item%size)
    call tidal_array_span(src, item%src, src_bytes)
    item%struct_size = c_sizeof(item)
    if (src_bytes /= item%size .or. .not. is_contiguous(dst) .or. .not. is_contiguous(src)) &
         item%struct_size = 0
  end function tidal_copy_item_of

  !> Many small copies in few runtime calls (entries from tidal_copy_item_of), ordered on
  !! `stream` (default: complete on return). Returns once the sources may be reused and,
  !! when an entry goes device->host, once every host destination holds its bytes; the rest
  !! is complete once the stream is synchronised. Errors: INVALID_ARGUMENT (a marked entry,
  !! overlapping destinations, a source overlapping a destination; C's messages number
  !! entries from 0, so "item 0" is items(1)), and the runtime's.
  subroutine tidal_copy_batch(ctx, items, status, stream)
    use tidal_c, only: c_copy_batch => tidal_copy_batch
    type(tidal_ctx), intent(in) :: ctx
    type(tidal_copy_item), intent(in) :: items(:)
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: stream
    type(c_ptr) :: on
    character(len=24) :: which
    integer :: bad
    if (.not. tidal_has_context(ctx, 'tidal_copy_batch', status)) return
    bad = findloc(items%struct_size, 0_c_size_t, dim=1)
    if (bad > 0) then
       write (which, '(i0)') bad
       call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_copy_batch: items(' // &
            trim(which) // ') has arrays of different sizes or a non-contiguous one ' // &
            '(or was not made by tidal_copy_item_of)')
       return
    end if
    on = c_null_ptr
    if (present(stream)) on = stream
    ! items(*) gets a contiguous copy when `items` is a strided section; with no entries the
    ! C call reads none.
    call tidal_from_c(c_copy_batch(ctx%handle, items, int(size(items), c_size_t), on), status)
  end subroutine tidal_copy_batch

  subroutine tidal_clock(ctx, seconds, status)
    use tidal_c, only: c_clock => tidal_clock
    type(tidal_ctx), intent(in) :: ctx
    real(real64), intent(out) :: seconds
    integer, intent(out) :: status
    real(c_double) :: value
    seconds = 0
    if (.not. tidal_has_context(ctx, 'tidal_clock', status)) return
    value = 0
    call tidal_from_c(c_clock(ctx%handle, value), status)
    if (status == TIDAL_OK) seconds = value
  end subroutine tidal_clock

  ! ---- Elastic device memory ------------------------------------------------------------
  ! Optional arguments of all four: flags (ior() of TIDAL_OFFLOAD_* / TIDAL_RESTORE_*,
  ! default 0), stream (type(c_ptr); default c_null_ptr: everything, complete on return) and
  ! result (type(tidal_elastic_result): what the call did, filled even on failure).

  !> Offloads every elastic allocation whose tag matches the glob `tag` ("weights*", "*" for
  !! all, "" for untagged ones): copies what the host homes lack (nothing with
  !! TIDAL_OFFLOAD_DISCARD), unmaps, and gives the physical memory back (or keeps it, with
  !! TIDAL_OFFLOAD_KEEP_PHYSICAL). Every address stays valid. A tag that matches nothing is
  !! TIDAL_OK with nothing moved.
  subroutine tidal_offload(ctx, tag, status, flags, stream, result)
    use tidal_c, only: c_offload => tidal_offload
    type(tidal_ctx), intent(in) :: ctx
    character(len=*), intent(in) :: tag
    integer, intent(out) :: status
    integer, intent(in), optional :: flags
    type(c_ptr), intent(in), optional :: stream
    type(tidal_elastic_result), intent(out), optional :: result
    call elastic_by_tag(c_offload, 'tidal_offload', ctx, tag, status, flags, stream, result)
  end subroutine tidal_offload

  !> Restores every elastic allocation whose tag matches the glob `tag`: maps its chunks again
  !! and copies the offloaded ones back, at the same addresses, bit-identical. With
  !! TIDAL_RESTORE_READ_ONLY you promise not to write it, so the next offload copies nothing.
  !! OUT_OF_MEMORY when the device has no room (nothing of that allocation stays mapped).
  subroutine tidal_restore(ctx, tag, status, flags, stream, result)
    use tidal_c, only: c_restore => tidal_restore
    type(tidal_ctx), intent(in) :: ctx
    character(len=*), intent(in) :: tag
    integer, intent(out) :: status
    integer, intent(in), optional :: flags
    type(c_ptr), intent(in), optional :: stream
    type(tidal_elastic_result), intent(out), optional :: result
    call elastic_by_tag(c_restore, 'tidal_restore', ctx, tag, status, flags, stream, result)
  end subroutine tidal_restore

  !> tidal_offload for the chunks `array` (any type and rank, a section too: a strided one
  !! covers the span from its lowest to its highest element) touches, in one elastic
  !! allocation. INVALID_ARGUMENT for memory that is not elastic.
  subroutine tidal_offload_range(ctx, array, status, flags, stream, result)
    use tidal_c, only: c_offload_range => tidal_offload_range
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    integer, intent(out) :: status
    integer, intent(in), optional :: flags
    type(c_ptr), intent(in), optional :: stream
    type(tidal_elastic_result), intent(out), optional :: result
    call elastic_by_range(c_offload_range, 'tidal_offload_range', ctx, array, status, flags, &
                          stream, result)
  end subroutine tidal_offload_range

  !> tidal_restore for the chunks `array` touches, in one elastic allocation.
  subroutine tidal_restore_range(ctx, array, status, flags, stream, result)
    use tidal_c, only: c_restore_range => tidal_restore_range
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    integer, intent(out) :: status
    integer, intent(in), optional :: flags
    type(c_ptr), intent(in), optional :: stream
    type(tidal_elastic_result), intent(out), optional :: result
    call elastic_by_range(c_restore_range, 'tidal_restore_range', ctx, array, status, flags, &
                          stream, result)
  end subroutine tidal_restore_range

  ! The four calls above differ only in the C function: offload and restore share their
  ! signatures (by tag, by range).
  subroutine elastic_by_tag(call_c, procedure, ctx, tag, status, flags, stream, result)
    interface
       function call_c(ctx, tag_glob, flags, stream, out) result(status) bind(C)
         import :: c_char, c_int, c_int32_t, c_ptr, tidal_elastic_result
         type(c_ptr), value :: ctx
         character(kind=c_char), intent(in) :: tag_glob(*)
         integer(c_int32_t), value :: flags
         type(c_ptr), value :: stream
         type(tidal_elastic_result), intent(inout) :: out
         integer(c_int) :: status
       end function call_c
    end interface
    character(len=*), intent(in) :: procedure
    type(tidal_ctx), intent(in) :: ctx
    character(len=*), intent(in) :: tag
    integer, intent(out) :: status
    integer, intent(in), optional :: flags
    type(c_ptr), intent(in), optional :: stream
    type(tidal_elastic_result), intent(out), optional :: result
    type(tidal_elastic_result) :: raw
    if (.not. tidal_has_context(ctx, procedure, status)) return
    raw%struct_size = c_sizeof(raw)
    call tidal_from_c(call_c(ctx%handle, tidal_c_string(trim(tag)), flags_or_0(flags), &
                             stream_or_null(stream), raw), status)
    if (present(result)) result = raw
  end subroutine elastic_by_tag

  subroutine elastic_by_range(call_c, procedure, ctx, array, status, flags, stream, result)
    interface
       function call_c(ctx, ptr, size, flags, stream, out) result(status) bind(C)
         import :: c_int, c_int32_t, c_ptr, c_size_t, tidal_elastic_result
         type(c_ptr), value :: ctx
         type(c_ptr), value :: ptr
         integer(c_size_t), value :: size
         integer(c_int32_t), value :: flags
         type(c_ptr), value :: stream
         type(tidal_elastic_result), intent(inout) :: out
         integer(c_int) :: status
       end function call_c
    end interface
    character(len=*), intent(in) :: procedure
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    integer, intent(out) :: status
    integer, intent(in), optional :: flags
    type(c_ptr), intent(in), optional :: stream
    type(tidal_elastic_result), intent(out), optional :: result
    type(tidal_elastic_result) :: raw
    type(c_ptr) :: lowest
    integer(c_size_t) :: bytes
    if (.not. tidal_has_context(ctx, procedure, status)) return
    if (.not. array_has_elements(array, procedure, lowest, bytes, status)) return
    raw%struct_size = c_sizeof(raw)
    call tidal_from_c(call_c(ctx%handle, lowest, bytes, flags_or_0(flags), &
                             stream_or_null(stream), raw), status)
    if (present(result)) result = raw
  end subroutine elastic_by_range

  integer(c_int32_t) function flags_or_0(flags) result(value)
    integer, intent(in), optional :: flags
    value = 0
    if (present(flags)) value = int(flags, c_int32_t)
  end function flags_or_0

  type(c_ptr) function stream_or_null(stream) result(value)
    type(c_ptr), intent(in), optional :: stream
    value = c_null_ptr
    if (present(stream)) value = stream
  end function stream_or_null

  !> The runtime in use and how many devices it has.
  subroutine tidal_get_system(ctx, system, status)
    type(tidal_ctx), intent(in) :: ctx
    type(tidal_system), intent(out) :: system
    integer, intent(out) :: status
    type(tidal_system_info) :: raw
    system%runtime = ''
    system%runtime_detail = ''
    if (.not. tidal_has_context(ctx, 'tidal_get_system', status)) return
    raw%struct_size = c_sizeof(raw)
    call tidal_from_c(tidal_system_info_get(ctx%handle, raw), status)
    if (status /= TIDAL_OK) return
    call tidal_f_chars(raw%runtime, system%runtime)
    call tidal_f_chars(raw%runtime_detail, system%runtime_detail)
    system%device_count = raw%device_count
    system%default_device = raw%default_device
    system%local_rank = raw%local_rank
    system%rank = raw%rank
  end subroutine tidal_get_system

  !> One device's capabilities; NOT_FOUND for an index the runtime does not have.
  subroutine tidal_get_device(ctx, index, device, status)
    type(tidal_ctx), intent(in) :: ctx
    integer, intent(in) :: index
    type(tidal_device), intent(out) :: device
    integer, intent(out) :: status
    type(tidal_device_info) :: raw
    device%name = ''
    device%arch = ''
    if (.not. tidal_has_context(ctx, 'tidal_get_device', status)) return
    raw%struct_size = c_sizeof(raw)
    call tidal_from_c(tidal_device_info_get(ctx%handle, int(index, c_int32_t), raw), status)
    if (status /= TIDAL_OK) return
    device%index = raw%index
    call tidal_f_chars(raw%name, device%name)
    call tidal_f_chars(raw%arch, device%arch)
    device%total_memory = raw%total_memory
    device%free_memory = raw%free_memory
    device%page_size = raw%page_size
    device%l2_size = raw%l2_size
    device%flags = raw%flags
    device%xnack = raw%xnack
    device%numa_node = raw%numa_node
  end subroutine tidal_get_device

  !> The resolved configuration and policy chain as TOML text, as the context uses it.
  subroutine tidal_config_text(ctx, text, status)
    type(tidal_ctx), intent(in) :: ctx
    character(len=:), allocatable, intent(out) :: text
    integer, intent(out) :: status
    character(kind=c_char), allocatable, target :: buffer(:)
    integer(c_size_t) :: needed, capacity
    text = ''
    needed = 0
    if (.not. tidal_has_context(ctx, 'tidal_config_text', status)) return
    ! Ask for the length first, then fill a buffer of exactly that size. The text cannot
    ! change between the two calls: it depends only on the context's fixed settings.
    call tidal_from_c(tidal_config_describe(ctx%handle, c_null_ptr, 0_c_size_t, needed), &
                      status)
    if (status /= TIDAL_OK .and. status /= TIDAL_ERROR_BUFFER_TOO_SMALL) return
    capacity = needed
    allocate(buffer(capacity))
    call tidal_from_c(tidal_config_describe(ctx%handle, c_loc(buffer), capacity, needed), &
                      status)
    if (status /= TIDAL_OK) return
    call tidal_f_chars(buffer, text)
  end subroutine tidal_config_text

  ! The string functions below are for ordinary code. In OpenMP parallel regions use the
  ! subroutine forms (tidal_get_status_message, tidal_get_last_error): gfortran (12 at least)
  ! keeps the length of a character(len=:) function result in a static temporary of the
  ! *caller*, so concurrent calls of any such function race (see tidal_base).

  !> "TIDAL_ERROR_CONFIG: configuration error": the status's name and short description.
  !! For the details of a failure, see tidal_last_error_message().
  function tidal_status_message(status) result(text)
    integer, intent(in) :: status
    character(len=:), allocatable :: text
    call tidal_get_status_message(status, text)
  end function tidal_status_message

  !> tidal_status_message as a subroutine, safe to call from several threads at once.
  subroutine tidal_get_status_message(status, message)
    integer, intent(in) :: status
    character(len=:), allocatable, intent(out) :: message
    character(len=:), allocatable :: name, description
    call tidal_f_string(tidal_status_name(int(status, c_int)), name)
    call tidal_f_string(tidal_status_string(int(status, c_int)), description)
    message = name // ': ' // description
  end subroutine tidal_get_status_message

  !> The detailed message of this thread's newest failed tidal call: what failed, the native
  !! error when there was one, and a hint. "" when no call on this thread has failed.
  function tidal_last_error_message() result(text)
    character(len=:), allocatable :: text
    call tidal_pending_error(text)
  end function tidal_last_error_message

  !> tidal_last_error_message as a subroutine, safe to call from several threads at once.
  subroutine tidal_get_last_error(message)
    character(len=:), allocatable, intent(out) :: message
    call tidal_pending_error(message)
  end subroutine tidal_get_last_error

  !> "auto", "device", "managed", "pinned", "pageable", "device-fine", "managed-coarse", "elastic";
  !! "unknown" for any other number.
  function tidal_kind_string(kind) result(text)
    integer, intent(in) :: kind
    character(len=:), allocatable :: text
    call tidal_f_string(tidal_kind_name(int(kind, c_int)), text)
  end function tidal_kind_string

  !> The library's version, e.g. "0.1.0" (may be newer than TIDAL_VERSION_STRING, the
  !! version these modules were compiled against).
  function tidal_version() result(text)
    character(len=:), allocatable :: text
    call tidal_f_string(c_tidal_version_string(), text)
  end function tidal_version

  ! The lowest byte and span of `array`; false (with INVALID_ARGUMENT) when it has no elements.
  logical function array_has_elements(array, procedure, lowest, bytes, status) result(ok)
    type(*), dimension(..), intent(in) :: array
    character(len=*), intent(in) :: procedure
    type(c_ptr), intent(out) :: lowest
    integer(c_size_t), intent(out) :: bytes
    integer, intent(out) :: status
    call tidal_array_span(array, lowest, bytes)
    ok = bytes > 0
    status = TIDAL_OK
    if (.not. ok) call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, procedure // &
         ': the array has no elements')
  end function array_has_elements
end module tidal

! Access declarations, advice, budgets and the runtime's clock from Fortran, on a simulated
! device whose migration windows are 64 KiB: tidal_declare takes arrays directly (through
! tidal_access_of) and moves them, tidal_advise sets advice the range query sees, a budget
! smaller than two arrays makes alternating declarations evict, a validation kernel runs on a
! caller's stream after a declaration (a runtime proof of tidal_check%stream), and every
! mistake comes back as a status and a message.
program test_declare
  use, intrinsic :: iso_c_binding, only: c_null_ptr, c_ptr
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use tidal
  use tidal_c, only: tidal_check, tidal_check_run, tidal_stream_create, tidal_stream_destroy
  use tidal_test_support
  implicit none
  !> Two simulated devices, 64 KiB pages and 64 KiB migration windows.
  character(len=*), parameter :: CONFIG = 'runtime = "sim"' // LF // &
                                          '[sim]' // LF // &
                                          'devices = 2' // LF // &
                                          'page_size = "64KiB"' // LF // &
                                          '[migration]' // LF // &
                                          'chunk_size = "64KiB"' // LF
  integer, parameter :: N = 32768                 ! real64 elements: 256 KiB, 4 windows
  integer(int64), parameter :: ARRAY_BYTES = 8_int64 * N
  type(tidal_ctx) :: ctx
  integer :: status

  call tidal_init(ctx, status, config_string=CONFIG)
  call expect_status(status, TIDAL_OK, 'tidal_init with 64 KiB migration windows')
  call declare_moves()
  call advice()
  call budget_evicts()
  call other_kinds_are_noops()
  call kernel_on_declared_stream()
  call clock()
  call errors()
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  write (*, '(a)') 'test_declare: passed'

contains

  subroutine stats_of(device, stats)
    integer, intent(in) :: device
    type(tidal_migration_stats), intent(out) :: stats
    call tidal_migration_stats_get(ctx, device, stats, status)
    call expect_status(status, TIDAL_OK, 'tidal_migration_stats_get')
  end subroutine stats_of

  !> One managed array declared for device 0 on the default stream moves there.
  subroutine declare_moves()
    real(real64), pointer :: a(:) => null()
    type(tidal_migration_stats) :: before, after
    type(tidal_range) :: range
    integer :: i
    call tidal_allocate(ctx, a, [N], status, kind=TIDAL_KIND_MANAGED, tag='declared')
    call expect_status(status, TIDAL_OK, 'allocate managed real64')
    a = [(real(i, real64), i = 1, N)]
    call stats_of(0, before)
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a, 0, TIDAL_ACCESS_READ_WRITE)], status)
    call expect_status(status, TIDAL_OK, 'declare a for device 0 on the default stream')
    call stats_of(0, after)
    call expect(after%declared_ranges >= 1, 'declared_ranges counts the declaration')
    call expect(after%migrated_bytes > before%migrated_bytes, 'the declaration migrated bytes')
    call expect(after%resident_bytes >= ARRAY_BYTES, 'the array is resident on device 0')
    call tidal_query_range(ctx, a, range, status)
    call expect_status(status, TIDAL_OK, 'tidal_query_range after the declaration')
    call expect(range%last_prefetch_location == 0, 'the range was moved to device 0')
    ! Declaring it again moves nothing: it is already there.
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a, 0, TIDAL_ACCESS_READ)], status)
    call expect_status(status, TIDAL_OK, 'declare a again')
    call stats_of(0, before)
    call expect(before%resident_hits > after%resident_hits, 'a second declaration hits')
    call expect_equal_int(before%migrated_bytes, after%migrated_bytes, 'nothing more migrated')
    ! A lookahead declaration of the next phase, then no entries: the phase ends.
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a(1:N/2), 1, TIDAL_ACCESS_READ)], &
                       status, lookahead=.true.)
    call expect_status(status, TIDAL_OK, 'lookahead declaration of half of a for device 1')
    call tidal_declare(ctx, c_null_ptr, [tidal_access ::], status)
    call expect_status(status, TIDAL_OK, 'no entries end the phase')
    call tidal_prefetch(ctx, a, TIDAL_DEVICE_HOST, status)
    call expect_status(status, TIDAL_OK, 'prefetch a back to the host')
    call expect(all(a == [(real(i, real64), i = 1, N)]), 'the data survives the declarations')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate a')
  end subroutine declare_moves

  !> Read-mostly advice reaches the runtime and the allocation's record, and comes off again.
  subroutine advice()
    real(real64), pointer :: a(:,:) => null()
    type(tidal_range) :: range
    type(tidal_array_info) :: info
    call tidal_allocate(ctx, a, [128, 256], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate a managed 2-D array')
    a = 3
    call tidal_advise(ctx, a, TIDAL_ADVICE_READ_MOSTLY, 0, status)
    call expect_status(status, TIDAL_OK, 'advise read-mostly')
    call tidal_query_range(ctx, a, range, status)
    call expect_status(status, TIDAL_OK, 'tidal_query_range after advice')
    call expect(range%read_mostly, 'the range query says read_mostly = 1')
    call tidal_query(ctx, a, info, status)
    call expect_status(status, TIDAL_OK, 'tidal_query after advice')
    call expect(iand(info%advice, TIDAL_ADVICE_READ_MOSTLY) /= 0, 'the allocation records it')
    call tidal_advise(ctx, a, TIDAL_ADVICE_PREFERRED_DEVICE, TIDAL_ADVICE_READ_MOSTLY, status)
    call expect_status(status, TIDAL_OK, 'unset read-mostly, set preferred device')
    call tidal_query_range(ctx, a, range, status)
    call expect_status(status, TIDAL_OK, 'tidal_query_range after unsetting')
    call expect(.not. range%read_mostly, 'read_mostly is off again')
    call expect(range%preferred_location == 0, 'the preferred location is the device')
    ! A section: the span of its elements.
    call tidal_advise(ctx, a(:, 10:20), TIDAL_ADVICE_READ_MOSTLY, 0, status)
    call expect_status(status, TIDAL_OK, 'advise a section')
    call tidal_query_range(ctx, a(:, 12:13), range, status)
    call expect_status(status, TIDAL_OK, 'tidal_query_range inside the section')
    call expect(range%read_mostly, 'the section is read-mostly')
    call expect(all(a == 3), 'advice leaves the data alone')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate the advised array')
  end subroutine advice

  !> A budget of 1.5 arrays: declaring two arrays in turn evicts, and no call fails.
  subroutine budget_evicts()
    real(real64), pointer :: a(:) => null(), b(:) => null()
    type(tidal_migration_stats) :: before, after
    integer :: round
    call tidal_allocate(ctx, a, [N], status, kind=TIDAL_KIND_MANAGED, tag='a')
    call expect_status(status, TIDAL_OK, 'allocate a')
    call tidal_allocate(ctx, b, [N], status, kind=TIDAL_KIND_MANAGED, tag='b')
    call expect_status(status, TIDAL_OK, 'allocate b')
    a = 1
    b = 2
    call tidal_budget_set(ctx, 0, 3 * ARRAY_BYTES / 2, status)
    call expect_status(status, TIDAL_OK, 'tidal_budget_set to 1.5 arrays')
    call stats_of(0, before)
    call expect_equal_int(before%budget, 3 * ARRAY_BYTES / 2, 'the stats show the budget')
    do round = 1, 3
       call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a, 0, TIDAL_ACCESS_READ)], status)
       call expect_status(status, TIDAL_OK, 'declare a under the budget')
       call tidal_declare(ctx, c_null_ptr, [tidal_access_of(b, 0, TIDAL_ACCESS_READ_WRITE)], &
                          status)
       call expect_status(status, TIDAL_OK, 'declare b under the budget')
    end do
    call stats_of(0, after)
    call expect(after%evictions > before%evictions, 'alternating declarations evict')
    call expect(after%evicted_bytes + after%dropped_bytes > before%evicted_bytes + &
                before%dropped_bytes, 'evictions moved or dropped bytes')
    call expect(after%resident_bytes <= after%budget, 'resident bytes stay within the budget')
    call expect_equal_int(after%budget_refusals, before%budget_refusals, 'no declaration refused')
    call tidal_declare(ctx, c_null_ptr, [tidal_access ::], status)
    call expect_status(status, TIDAL_OK, 'end the phase')
    call tidal_budget_set(ctx, 0, 0, status)
    call expect_status(status, TIDAL_OK, 'remove the budget (default-integer bytes)')
    call stats_of(0, after)
    call expect_equal_int(after%budget, 0_int64, 'no budget')
    call expect(all(a == 1) .and. all(b == 2), 'the data survives eviction')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate a')
    call tidal_deallocate(ctx, b, status)
    call expect_status(status, TIDAL_OK, 'deallocate b')
  end subroutine budget_evicts

  !> Memory that cannot move needs nothing: declaring and advising it succeed and count.
  subroutine other_kinds_are_noops()
    real(real64), pointer :: p(:) => null()
    type(tidal_migration_stats) :: before, after
    call tidal_allocate(ctx, p, [4096], status, kind=TIDAL_KIND_PINNED)
    call expect_status(status, TIDAL_OK, 'allocate pinned memory')
    call stats_of(0, before)
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(p, 0, TIDAL_ACCESS_READ)], status)
    call expect_status(status, TIDAL_OK, 'declaring pinned memory is a no-op')
    call stats_of(0, after)
    call expect(after%noops > before%noops, 'the no-op is counted')
    call tidal_advise(ctx, p, TIDAL_ADVICE_READ_MOSTLY, 0, status)
    call expect_status(status, TIDAL_OK, 'advising pinned memory is a no-op')
    call tidal_declare(ctx, c_null_ptr, [tidal_access ::], status)
    call expect_status(status, TIDAL_OK, 'end the phase')
    call tidal_deallocate(ctx, p, status)
    call expect_status(status, TIDAL_OK, 'deallocate pinned memory')
  end subroutine other_kinds_are_noops

  !> Three arrays declared on a stream of the caller's, then a TRIAD kernel run on that stream
  !! through the raw tidal_check (its new `stream` field).
  subroutine kernel_on_declared_stream()
    real(real64), pointer, contiguous :: x(:) => null(), y(:) => null(), z(:) => null()
    type(tidal_check) :: check
    type(c_ptr) :: stream
    call allocate_triad(ctx, x, y, z, N)
    status = tidal_stream_create(ctx%handle, 1, stream)
    call expect_status(status, TIDAL_OK, 'tidal_stream_create on device 1')
    call tidal_declare(ctx, stream, [tidal_access_of(x, 1, TIDAL_ACCESS_WRITE), &
                                     tidal_access_of(y, 1, TIDAL_ACCESS_READ), &
                                     tidal_access_of(z, 1, TIDAL_ACCESS_READ)], status)
    call expect_status(status, TIDAL_OK, 'declare x, y, z for device 1 on a stream')
    check = triad_check(x, y, z)
    check%stream = stream
    status = tidal_check_run(ctx%handle, check)
    call expect_status(status, TIDAL_OK, 'tidal_check_run TRIAD on the declared stream')
    call tidal_declare(ctx, stream, [tidal_access ::], status)
    call expect_status(status, TIDAL_OK, 'end the stream''s phase')
    status = tidal_stream_destroy(ctx%handle, stream)
    call expect_status(status, TIDAL_OK, 'tidal_stream_destroy')
    call expect_triad(x, 'TRIAD on the declared stream computed x = y + 0.5 * z')
    call deallocate_triad(ctx, x, y, z)
  end subroutine kernel_on_declared_stream

  subroutine clock()
    real(real64) :: t0, t1
    call tidal_clock(ctx, t0, status)
    call expect_status(status, TIDAL_OK, 'tidal_clock')
    call tidal_clock(ctx, t1, status)
    call expect_status(status, TIDAL_OK, 'tidal_clock again')
    call expect(t0 >= 0 .and. t1 >= t0, 'the runtime''s clock does not go back')
  end subroutine clock

  subroutine errors()
    real(real64), pointer :: a(:) => null()
    real(real64) :: own(100)
    type(tidal_migration_stats) :: stats
    type(tidal_ctx) :: never_initialised
    type(tidal_access) :: by_hand
    real(real64) :: seconds
    call tidal_allocate(ctx, a, [N], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate for the error cases')
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a, 0, 4)], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'mode', 'declare with mode 4')
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a, 0, 0)], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'mode', 'declare with mode 0')
    own = 1
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(own, 0, TIDAL_ACCESS_READ)], status)
    call expect_error(status, TIDAL_ERROR_UNKNOWN_POINTER, 'not inside any live allocation', &
                      'declare a Fortran array')
    call tidal_advise(ctx, own, TIDAL_ADVICE_READ_MOSTLY, 0, status)
    call expect_status(status, TIDAL_ERROR_UNKNOWN_POINTER, 'advise a Fortran array')
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a, 0, TIDAL_ACCESS_READ), &
                                         tidal_access_of(a(5:4), 0, TIDAL_ACCESS_READ)], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'accesses(2) names no memory', &
                      'declare an empty section')
    call tidal_declare(ctx, c_null_ptr, [by_hand], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'accesses(1) names no memory', &
                      'declare a tidal_access nobody filled in')
    call tidal_declare(ctx, c_null_ptr, [tidal_access_of(a, 7, TIDAL_ACCESS_READ)], status)
    call expect_status(status, TIDAL_ERROR_NOT_FOUND, 'declare for device 7 of 2')
    call tidal_advise(ctx, a, TIDAL_ADVICE_READ_MOSTLY, TIDAL_ADVICE_READ_MOSTLY, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'both set and unset', &
                      'advice both set and unset')
    call tidal_advise(ctx, a, 256, 0, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'unknown advice bits', &
                      'unknown advice bits')
    call tidal_advise(ctx, a(3:2), TIDAL_ADVICE_READ_MOSTLY, 0, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'no elements', 'advise an empty section')
    call tidal_budget_set(ctx, 0, -1_int64, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'negative', 'a negative budget')
    call tidal_budget_set(ctx, 7, 1024, status)
    call expect_status(status, TIDAL_ERROR_NOT_FOUND, 'a budget for device 7')
    call tidal_migration_stats_get(ctx, 7, stats, status)
    call expect_status(status, TIDAL_ERROR_NOT_FOUND, 'stats of device 7')
    call tidal_declare(never_initialised, c_null_ptr, [tidal_access_of(a, 0, 1)], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not initialised', &
                      'declare without a context')
    call tidal_clock(never_initialised, seconds, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not initialised', &
                      'tidal_clock without a context')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate for the error cases')
  end subroutine errors
end program test_declare

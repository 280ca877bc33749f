! tidal_prefetch and tidal_query_range take Fortran arrays directly (any type and rank,
! sections included) on two simulated devices; data survives every move; the raw interface
! tidal_check_run works on tidal-allocated Fortran arrays (a runtime proof of the tidal_check
! layout).
program test_prefetch
  use, intrinsic :: iso_fortran_env, only: int32, int64, real64
  use tidal
  use tidal_c, only: tidal_check, tidal_check_run
  use tidal_test_support
  implicit none
  type(tidal_ctx) :: ctx
  integer :: status

  call start_context(ctx)
  call managed_memory_moves()
  call sections()
  call other_kinds_stay()
  call prefetch_errors()
  call raw_validation_kernel()
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  write (*, '(a)') 'test_prefetch: passed'

contains

  subroutine expect_location(array, location, what)
    type(*), dimension(..), intent(in) :: array
    integer, intent(in) :: location
    character(len=*), intent(in) :: what
    type(tidal_range) :: range
    call tidal_query_range(ctx, array, range, status)
    call expect_status(status, TIDAL_OK, 'tidal_query_range ' // what)
    if (range%last_prefetch_location /= location) then
       write (*, '(a, i0, a, i0)') 'last prefetch location ', range%last_prefetch_location, &
            ', expected ', location
    end if
    call expect(range%last_prefetch_location == location, what)
  end subroutine expect_location

  subroutine managed_memory_moves()
    real(real64), pointer :: a(:,:) => null()
    integer :: i
    call tidal_allocate(ctx, a, [256, 256], status, kind=TIDAL_KIND_MANAGED, tag='moves')
    call expect_status(status, TIDAL_OK, 'allocate managed memory')
    a = reshape([(real(i, real64), i = 1, size(a))], shape(a))
    call tidal_prefetch(ctx, a, 1, status)
    call expect_status(status, TIDAL_OK, 'prefetch to device 1')
    call expect_location(a, 1, 'after a prefetch to device 1 the range is there')
    call tidal_prefetch(ctx, a, TIDAL_DEVICE_HOST, status)
    call expect_status(status, TIDAL_OK, 'prefetch to the host')
    call expect_location(a, TIDAL_DEVICE_HOST, 'after a prefetch to the host the range is there')
    call tidal_prefetch(ctx, a, 0, status)
    call expect_status(status, TIDAL_OK, 'prefetch to device 0')
    call expect_location(a, 0, 'after a prefetch to device 0 the range is there')
    call tidal_prefetch(ctx, a, TIDAL_DEVICE_HOST, status)
    call expect_status(status, TIDAL_OK, 'prefetch back to the host')
    call expect(all(pack(a, .true.) == [(real(i, real64), i = 1, size(a))]), &
                'the data survives device 1, host, device 0, host')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate managed memory')
  end subroutine managed_memory_moves

  subroutine sections()
    integer(int32), pointer :: a(:,:,:) => null()
    call tidal_allocate(ctx, a, [64, 64, 8], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate a managed 3-D array')
    a = 7
    ! Contiguous section (planes 3 to 5), strided section (every other row, reversed), one
    ! element, and a 1-D column: each is a range inside the allocation.
    call tidal_prefetch(ctx, a(:, :, 3:5), 1, status)
    call expect_status(status, TIDAL_OK, 'prefetch planes 3:5')
    call expect_location(a(:, :, 3:5), 1, 'planes 3:5 are on device 1')
    call tidal_prefetch(ctx, a(64:1:-2, :, 8), 0, status)
    call expect_status(status, TIDAL_OK, 'prefetch a reversed strided section')
    call expect_location(a(64:1:-2, :, 8), 0, 'the strided section is on device 0')
    call tidal_prefetch(ctx, a(64, 64, 8), TIDAL_DEVICE_HOST, status)
    call expect_status(status, TIDAL_OK, 'prefetch the last element')
    call tidal_prefetch(ctx, a(:, 1, 1), 1, status)
    call expect_status(status, TIDAL_OK, 'prefetch one column')
    call expect(all(a == 7), 'the data survives moves of sections')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate the 3-D array')
  end subroutine sections

  !> Memory that cannot move: the prefetch still succeeds (callers need not know the kind),
  !! and the range query says it is not managed memory.
  subroutine other_kinds_stay()
    real(real64), pointer :: p(:) => null(), d(:) => null()
    type(tidal_range) :: range
    call tidal_allocate(ctx, p, [4096], status, kind=TIDAL_KIND_PINNED)
    call expect_status(status, TIDAL_OK, 'allocate pinned memory')
    call tidal_allocate(ctx, d, [4096], status, kind=TIDAL_KIND_DEVICE, device=1)
    call expect_status(status, TIDAL_OK, 'allocate device memory')
    call tidal_prefetch(ctx, p, 0, status)
    call expect_status(status, TIDAL_OK, 'prefetch of pinned memory is a no-op')
    call tidal_prefetch(ctx, d(100:), TIDAL_DEVICE_HOST, status)
    call expect_status(status, TIDAL_OK, 'prefetch of device memory is a no-op')
    call tidal_query_range(ctx, p, range, status)
    call expect_error(status, TIDAL_ERROR_NOT_SUPPORTED, 'managed', &
                      'tidal_query_range of pinned memory')
    call tidal_deallocate(ctx, p, status)
    call expect_status(status, TIDAL_OK, 'deallocate pinned memory')
    call tidal_deallocate(ctx, d, status)
    call expect_status(status, TIDAL_OK, 'deallocate device memory')
  end subroutine other_kinds_stay

  subroutine prefetch_errors()
    real(real64), pointer :: a(:,:) => null(), alias(:,:) => null()
    real(real64) :: own(100)
    type(tidal_ctx) :: never_initialised
    type(tidal_range) :: range
    call tidal_allocate(ctx, a, [32, 32], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate for the error cases')
    call tidal_prefetch(ctx, a, 7, status)
    call expect_status(status, TIDAL_ERROR_NOT_FOUND, 'prefetch to device 7 of 2')
    call tidal_prefetch(ctx, a, -7, status)
    call expect_status(status, TIDAL_ERROR_NOT_FOUND, 'prefetch to device -7')
    own = 1
    call tidal_prefetch(ctx, own, 0, status)
    call expect_status(status, TIDAL_ERROR_UNKNOWN_POINTER, 'prefetch of a Fortran array')
    call tidal_prefetch(ctx, a(:, 3:2), 0, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'no elements', &
                      'prefetch of an empty section')
    call tidal_query_range(ctx, a(5:4, :), range, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'no elements', &
                      'tidal_query_range of an empty section')
    call tidal_prefetch(never_initialised, a, 0, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not initialised', &
                      'prefetch without a context')
    alias => a
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate for the error cases')
    call tidal_prefetch(ctx, alias, 0, status)
    call expect_status(status, TIDAL_ERROR_UNKNOWN_POINTER, 'prefetch of freed memory')
  end subroutine prefetch_errors

  !> tidal_check_run through the raw interface on Fortran arrays: target = source +
  !! scalar * source2 (TRIAD, doubles), then checked element by element here.
  subroutine raw_validation_kernel()
    real(real64), pointer, contiguous :: x(:) => null(), y(:) => null(), z(:) => null()
    type(tidal_check) :: check
    call allocate_triad(ctx, x, y, z, 4096)
    check = triad_check(x, y, z)
    status = tidal_check_run(ctx%handle, check)
    call expect_status(status, TIDAL_OK, 'tidal_check_run TRIAD on device 1')
    call expect_triad(x, 'TRIAD computed x = y + 0.5 * z')
    call expect(check%elapsed_ms > 0, 'tidal_check_run reports a device time')
    call deallocate_triad(ctx, x, y, z)
  end subroutine raw_validation_kernel
end program test_prefetch

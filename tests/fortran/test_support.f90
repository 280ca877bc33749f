! Checks shared by the Fortran tests. A failed check prints what was expected, what came back
! and tidal's detailed message, then ends the program with `error stop` (non-zero exit), so
! meson test reports the test as failed.
module tidal_test_support
  use, intrinsic :: iso_c_binding, only: c_double, c_loc, c_size_t, c_sizeof
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use tidal
  use tidal_c, only: tidal_check
  implicit none
  private
  public :: SIM_CONFIG, LF, start_context, expect, expect_status, expect_contains, &
            expect_error, expect_equal_int, allocate_triad, triad_check, expect_triad, &
            deallocate_triad

  character(len=*), parameter :: LF = new_line('a')
  !> Two simulated devices with XNACK on, whatever the machine has; TIDAL_LOG_LEVEL=error
  !! comes from the test environment.
  character(len=*), parameter :: SIM_CONFIG = 'runtime = "sim"' // LF // &
                                              '[sim]' // LF // &
                                              'devices = 2' // LF

contains

  subroutine start_context(ctx)
    type(tidal_ctx), intent(out) :: ctx
    integer :: status
    call tidal_init(ctx, status, config_string=SIM_CONFIG)
    call expect_status(status, TIDAL_OK, 'tidal_init with the simulated device')
  end subroutine start_context

  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
       write (*, '(a)') 'FAILED: ' // what
       error stop 'a check failed (see above)'
    end if
  end subroutine expect

  subroutine expect_equal_int(actual, expected, what)
    integer(int64), intent(in) :: actual, expected
    character(len=*), intent(in) :: what
    if (actual /= expected) then
       write (*, '(a, i0, a, i0)') 'FAILED: ' // what // ': got ', actual, ', expected ', expected
       error stop 'a check failed (see above)'
    end if
  end subroutine expect_equal_int

  subroutine expect_status(status, expected, what)
    integer, intent(in) :: status, expected
    character(len=*), intent(in) :: what
    if (status /= expected) then
       write (*, '(a)') 'FAILED: ' // what
       write (*, '(a)') '  got      ' // tidal_status_message(status)
       write (*, '(a)') '  expected ' // tidal_status_message(expected)
       write (*, '(a)') '  message  ' // tidal_last_error_message()
       error stop 'a check failed (see above)'
    end if
  end subroutine expect_status

  subroutine expect_contains(text, needle, what)
    character(len=*), intent(in) :: text, needle, what
    if (index(text, needle) == 0) then
       write (*, '(a)') 'FAILED: ' // what
       write (*, '(a)') '  "' // needle // '" is not in "' // text // '"'
       error stop 'a check failed (see above)'
    end if
  end subroutine expect_contains

  !> A failed call: the status, and a detailed message that says something specific.
  subroutine expect_error(status, expected, needle, what)
    integer, intent(in) :: status, expected
    character(len=*), intent(in) :: needle, what
    call expect_status(status, expected, what)
    call expect_contains(tidal_last_error_message(), needle, what // ' (message)')
  end subroutine expect_error

  !> Three managed arrays of n doubles for a TRIAD kernel (x = y + 0.5 * z): y = i, z = 2 i,
  !! and x = -1, which is no element of the answer, so a kernel that never ran cannot pass.
  subroutine allocate_triad(ctx, x, y, z, n)
    type(tidal_ctx), intent(in) :: ctx
    real(real64), pointer, contiguous, intent(inout) :: x(:), y(:), z(:)
    integer, intent(in) :: n
    integer :: i, status
    call tidal_allocate(ctx, x, [n], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate x')
    call tidal_allocate(ctx, y, [n], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate y')
    call tidal_allocate(ctx, z, [n], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate z')
    y = [(real(i, real64), i = 1, n)]
    z = [(real(2 * i, real64), i = 1, n)]
    x = -1
  end subroutine allocate_triad

  !> The raw tidal_check for x = y + 0.5 * z on device 1, built field by field as a C caller
  !! would, so running it proves the Fortran layout of tidal_check.
  function triad_check(x, y, z) result(check)
    real(real64), pointer, contiguous, intent(in) :: x(:), y(:), z(:)
    type(tidal_check) :: check
    check%struct_size = c_sizeof(check)
    check%kind = TIDAL_CHECK_TRIAD
    check%device = 1
    check%target = c_loc(x)
    check%source = c_loc(y)
    check%source2 = c_loc(z)
    check%size = int(size(x), c_size_t) * 8
    check%scalar = 0.5_c_double
  end function triad_check

  !> Element by element, against what allocate_triad wrote.
  subroutine expect_triad(x, what)
    real(real64), intent(in) :: x(:)
    character(len=*), intent(in) :: what
    integer :: i
    call expect(all(x == [(real(i, real64) + 0.5_real64 * real(2 * i, real64), i = 1, size(x))]), what)
  end subroutine expect_triad

  subroutine deallocate_triad(ctx, x, y, z)
    type(tidal_ctx), intent(in) :: ctx
    real(real64), pointer, contiguous, intent(inout) :: x(:), y(:), z(:)
    integer :: status
    call tidal_deallocate(ctx, x, status)
    call expect_status(status, TIDAL_OK, 'deallocate x')
    call tidal_deallocate(ctx, y, status)
    call expect_status(status, TIDAL_OK, 'deallocate y')
    call tidal_deallocate(ctx, z, status)
    call expect_status(status, TIDAL_OK, 'deallocate z')
  end subroutine deallocate_triad
end module tidal_test_support

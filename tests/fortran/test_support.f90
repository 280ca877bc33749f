! Checks shared by the Fortran tests. A failed check prints what was expected, what came back
! and tidal's detailed message, then ends the program with `error stop` (non-zero exit), so
! meson test reports the test as failed.
module tidal_test_support
  use, intrinsic :: iso_fortran_env, only: int64
  use tidal
  implicit none
  private
  public :: SIM_CONFIG, LF, start_context, expect, expect_status, expect_contains, &
            expect_error, expect_equal_int

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
end module tidal_test_support

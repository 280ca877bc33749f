! System and device descriptions as Fortran derived types, the resolved configuration text,
! contexts from a file, and the string helpers (status, kind, version).
program test_system
  use, intrinsic :: iso_fortran_env, only: int64
  use tidal
  use tidal_test_support
  implicit none
  type(tidal_ctx) :: ctx
  integer :: status

  ! Nothing has failed yet on this thread.
  call expect(len(tidal_last_error_message()) == 0, 'no failure yet: the message is ""')
  call start_context(ctx)
  call system_and_devices()
  call configuration_text()
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  call context_from_file()
  call context_from_defaults()
  call strings()
  write (*, '(a)') 'test_system: passed'

contains

  subroutine system_and_devices()
    type(tidal_system) :: system
    type(tidal_device) :: device
    integer :: i
    call tidal_get_system(ctx, system, status)
    call expect_status(status, TIDAL_OK, 'tidal_get_system')
    call expect(system%runtime == 'sim', 'the runtime is "sim", not "' // system%runtime // '"')
    call expect_contains(system%runtime_detail, 'simulated', 'runtime_detail describes the sim')
    call expect(system%device_count == 2, 'the configuration asked for 2 devices')
    do i = 0, system%device_count - 1
       call tidal_get_device(ctx, i, device, status)
       call expect_status(status, TIDAL_OK, 'tidal_get_device')
       call expect(device%index == i, 'the device knows its index')
       call expect_contains(device%name, 'simulated', 'the device name says simulated')
       call expect(len(device%arch) > 0, 'the device has an architecture')
       call expect(device%total_memory > 0 .and. device%free_memory > 0 .and. &
                   device%free_memory <= device%total_memory, 'memory figures are sane')
       call expect(device%page_size > 0 .and. iand(device%page_size, device%page_size - 1) == 0, &
                   'the page size is a power of two')
       call expect(iand(device%flags, TIDAL_DEVICE_FLAG_SIMULATED) /= 0, 'the SIMULATED flag is set')
       call expect(iand(device%flags, TIDAL_DEVICE_FLAG_MANAGED) /= 0, 'managed memory works')
       call expect(device%xnack >= TIDAL_XNACK_NOT_APPLICABLE .and. &
                   device%xnack <= TIDAL_XNACK_UNKNOWN, 'xnack is a tidal_xnack')
    end do
  end subroutine system_and_devices

  subroutine configuration_text()
    character(len=:), allocatable :: text
    call tidal_config_text(ctx, text, status)
    call expect_status(status, TIDAL_OK, 'tidal_config_text')
    call expect_contains(text, 'runtime = "sim"', 'the text has the runtime')
    call expect_contains(text, 'devices = 2', 'the text has the device count')
    call expect(index(text, achar(0)) == 0, 'the text holds no NUL')
  end subroutine configuration_text

  subroutine context_from_file()
    type(tidal_ctx) :: from_file
    type(tidal_system) :: system
    character(len=256) :: folder
    character(len=:), allocatable :: path
    character(len=12) :: suffix
    integer :: unit, length
    real :: noise
    call get_environment_variable('TMPDIR', folder, length)
    if (length == 0) folder = '/tmp'
    ! A random suffix: two builds may run this test at the same time.
    call random_init(repeatable=.false., image_distinct=.true.)
    call random_number(noise)
    write (suffix, '(i0)') int(noise * 1.0e9)
    path = trim(folder) // '/tidal-fortran-test-system-' // trim(suffix) // '.toml'
    open (newunit=unit, file=path, status='replace', action='write')
    write (unit, '(a)') '# written by test_system.f90'
    write (unit, '(a)') 'runtime = "sim"'
    write (unit, '(a)') '[sim]'
    write (unit, '(a)') 'devices = 3'
    close (unit)
    call tidal_init(from_file, status, config_file=path)
    open (newunit=unit, file=path, status='old')
    close (unit, status='delete')
    call expect_status(status, TIDAL_OK, 'tidal_init from a file')
    call tidal_get_system(from_file, system, status)
    call expect(system%device_count == 3, 'the file asked for 3 devices')
    call tidal_finalize(from_file, status)
    call expect_status(status, TIDAL_OK, 'tidal_finalize of the file context')
  end subroutine context_from_file

  !> No configuration: $TIDAL_CONFIG is empty in the test environment, so built-in defaults
  !! (runtime "auto": a real GPU where one answers, else the simulated device).
  subroutine context_from_defaults()
    type(tidal_ctx) :: defaults
    type(tidal_system) :: system
    call tidal_init(defaults, status)
    call expect_status(status, TIDAL_OK, 'tidal_init with built-in defaults')
    call tidal_get_system(defaults, system, status)
    call expect_status(status, TIDAL_OK, 'tidal_get_system of the default context')
    call expect(len(system%runtime) > 0, 'the default context names its runtime')
    call tidal_finalize(defaults, status)
    call expect_status(status, TIDAL_OK, 'tidal_finalize of the default context')
  end subroutine context_from_defaults

  subroutine strings()
    character(len=:), allocatable :: message
    type(tidal_ctx) :: none
    type(tidal_system) :: system
    call expect(tidal_status_message(TIDAL_OK) == 'TIDAL_OK: success', 'status message of TIDAL_OK')
    call expect(tidal_status_message(TIDAL_ERROR_CONFIG) == 'TIDAL_ERROR_CONFIG: configuration error', &
                'status message of TIDAL_ERROR_CONFIG')
    call expect_contains(tidal_status_message(999), 'TIDAL_STATUS_UNKNOWN', 'an unknown status')
    call expect(tidal_kind_string(TIDAL_KIND_MANAGED) == 'managed', 'kind string of MANAGED')
    call expect(tidal_kind_string(TIDAL_KIND_MANAGED_COARSE) == 'managed-coarse', &
                'kind string of MANAGED_COARSE')
    call expect(tidal_kind_string(TIDAL_KIND_ELASTIC) == 'elastic', 'kind string of ELASTIC')
    call expect(tidal_kind_string(99) == 'unknown', 'kind string of an unknown kind')
    call expect(tidal_version() == TIDAL_VERSION_STRING, 'library and modules have one version')
    ! The subroutine forms give the same text as the functions.
    call tidal_get_status_message(TIDAL_ERROR_NOT_FOUND, message)
    call expect(message == 'TIDAL_ERROR_NOT_FOUND: not found', 'tidal_get_status_message')
    call expect(message == tidal_status_message(TIDAL_ERROR_NOT_FOUND), &
                'tidal_get_status_message equals the function')
    call tidal_get_system(none, system, status)
    call tidal_get_last_error(message)
    call expect(len(message) > 0, 'tidal_get_last_error after a failure')
    call expect(message == tidal_last_error_message(), 'tidal_get_last_error equals the function')
  end subroutine strings
end program test_system

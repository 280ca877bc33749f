! Module tidal from OpenMP threads on one context: each thread allocates, writes, queries and
! frees its own arrays, and each thread's failure message is its own (the binding keeps its
! messages per thread, like the C library). Before the binding avoided character(len=:)
! function results internally, this test corrupted the heap within a few runs.
program test_threads
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use omp_lib, only: omp_get_thread_num, omp_get_num_threads
  use tidal
  use tidal_test_support
  implicit none
  integer, parameter :: rounds = 200
  type(tidal_ctx) :: ctx
  integer :: status, failures, threads

  call start_context(ctx)
  failures = 0
  threads = 0
  !$omp parallel num_threads(4) reduction(+:failures) shared(ctx, threads)
  !$omp single
  threads = omp_get_num_threads()
  !$omp end single
  failures = failures + worker(omp_get_thread_num())
  !$omp end parallel
  if (failures /= 0) then
     write (*, '(i0, a)') failures, ' checks failed in the threads (see above)'
     error stop 'a check failed in a thread'
  end if
  call expect(threads == 4, 'four threads ran')
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  write (*, '(a, i0, a)') 'test_threads: ', threads, ' threads passed'

contains

  !> The number of failed checks in one thread (error stop from a thread would not say which
  !! check failed in which thread).
  integer function worker(me) result(failed)
    integer, intent(in) :: me
    ! No `=> null()` here: an initialiser implies SAVE, and a saved pointer would be shared
    ! by all threads.
    real(real64), pointer :: a(:,:), b(:,:)
    type(tidal_array_info) :: info
    character(len=16) :: tag, number
    character(len=:), allocatable :: message
    integer :: round, status
    failed = 0
    nullify(a, b)
    write (tag, '(a, i0)') 'thread-', me
    do round = 1, rounds
       call tidal_allocate(ctx, a, [16, 8 + me], status, kind=TIDAL_KIND_MANAGED, tag=tag)
       if (status /= TIDAL_OK) then
          failed = failed + 1
          call tidal_get_last_error(message)
          write (*, '(a)') 'allocate failed: ' // message
          cycle
       end if
       a = real(me * 1000 + round, real64)
       call tidal_query(ctx, a, info, status)
       if (status /= TIDAL_OK .or. info%tag /= trim(tag) .or. info%size /= 16_int64 * (8 + me) * 8) then
          failed = failed + 1
          write (*, '(a)') 'query of ' // trim(tag) // ' came back wrong: ' // info%tag
       end if
       ! A mistake only this thread makes: the message must name its own extent.
       call tidal_allocate(ctx, b, [1, -(me + 1)], status)
       ! The subroutine form: tidal_last_error_message() is a character(len=:) function,
       ! which gfortran 12 cannot call from several threads at once (see module tidal).
       call tidal_get_last_error(message)
       write (number, '(a, i0, a)') '(', -(me + 1), ')'
       if (status /= TIDAL_ERROR_INVALID_ARGUMENT .or. index(message, trim(number)) == 0) then
          failed = failed + 1
          write (*, '(a)') trim(tag) // ' got another thread''s message: ' // message
       end if
       if (any(a /= real(me * 1000 + round, real64))) then
          failed = failed + 1
          write (*, '(a)') trim(tag) // ': another thread wrote into this thread''s array'
       end if
       call tidal_deallocate(ctx, a, status)
       if (status /= TIDAL_OK .or. associated(a)) failed = failed + 1
    end do
  end function worker
end program test_threads

! jacobi — Jacobi sweeps for Laplace's equation over tidal-managed 2-D arrays.
!
! The unit square with u = 1 on its top edge and u = 0 on the other three; the grid has n x n
! interior points plus a boundary ring. By symmetry (four such problems, one per edge, add
! up to u = 1 everywhere) the value at the centre is exactly 1/4, for the discrete problem
! too, so the program can check its own answer.
!
!   jacobi [config.toml]
!
! Without an argument tidal reads $TIDAL_CONFIG, or uses its defaults (a real GPU runtime where
! one answers, else the simulated device). The sweeps run on the host here; on a GPU the same
! arrays would be handed to kernels, with tidal_prefetch moving them between sweeps.
program jacobi
  use, intrinsic :: iso_fortran_env, only: real64
  use tidal
  implicit none
  integer, parameter :: n = 49                  ! odd: the centre is a grid point
  integer, parameter :: max_sweeps = 50000
  real(real64), parameter :: tolerance = 1.0e-10_real64
  type(tidal_ctx) :: ctx
  type(tidal_array_info) :: info
  real(real64), pointer :: u(:,:) => null(), u_new(:,:) => null(), swap(:,:) => null()
  real(real64) :: residual, centre
  character(len=4096) :: config
  integer :: status, sweep, length

  call get_command_argument(1, config, length)
  if (length > 0) then
     call tidal_init(ctx, status, config_file=config(1:length))
  else
     call tidal_init(ctx, status)
  end if
  call check(status, 'tidal_init')

  ! Both grids in managed memory: the host sets them up and reads the answer, a device could
  ! sweep them, and tidal moves pages to whichever side asks.
  call tidal_allocate(ctx, u, [n + 2, n + 2], status, kind=TIDAL_KIND_MANAGED, tag='u')
  call check(status, 'tidal_allocate u')
  call tidal_allocate(ctx, u_new, [n + 2, n + 2], status, kind=TIDAL_KIND_MANAGED, tag='u_new')
  call check(status, 'tidal_allocate u_new')
  call tidal_query(ctx, u, info, status)
  call check(status, 'tidal_query u')
  write (*, '(a, i0, a, i0, 3a, i0, 3a)') 'jacobi: ', n, ' x ', n, ' grid in ', &
       tidal_kind_string(info%kind), ' memory (', info%size, ' bytes each, placed by ', &
       info%placed_by, ')'

  ! Boundary: 1 on the top edge (the last column), 0 elsewhere; interior starts at 0.
  u = 0
  u(:, n + 2) = 1
  u_new = u

  ! The host sweeps: bring the pages here once rather than faulting them in one by one.
  call tidal_prefetch(ctx, u, TIDAL_DEVICE_HOST, status)
  call check(status, 'tidal_prefetch u')
  call tidal_prefetch(ctx, u_new, TIDAL_DEVICE_HOST, status)
  call check(status, 'tidal_prefetch u_new')

  residual = huge(residual)
  do sweep = 1, max_sweeps
     u_new(2:n + 1, 2:n + 1) = 0.25_real64 * (u(1:n, 2:n + 1) + u(3:n + 2, 2:n + 1) + &
                                              u(2:n + 1, 1:n) + u(2:n + 1, 3:n + 2))
     residual = maxval(abs(u_new(2:n + 1, 2:n + 1) - u(2:n + 1, 2:n + 1)))
     swap => u
     u => u_new
     u_new => swap
     if (mod(sweep, 2000) == 0) write (*, '(a, i6, a, es10.3)') 'sweep ', sweep, &
          '  residual ', residual
     if (residual < tolerance) exit
  end do
  ! The middle interior point: interior indices run 2..n+1 and n is odd, so (n + 1) / 2 is exact
  ! (gfortran warns about a constant integer division that truncates).
  centre = u((n + 1) / 2 + 1, (n + 1) / 2 + 1)
  write (*, '(a, i0, a, es10.3, a, f12.9)') 'converged after ', min(sweep, max_sweeps), &
       ' sweeps: residual ', residual, ', centre ', centre

  ! Swapping pointers does not matter to tidal: each still points at one allocation's base.
  call tidal_deallocate(ctx, u, status)
  call check(status, 'tidal_deallocate u')
  call tidal_deallocate(ctx, u_new, status)
  call check(status, 'tidal_deallocate u_new')
  call tidal_finalize(ctx, status)
  call check(status, 'tidal_finalize')

  if (residual >= tolerance) error stop 'jacobi: did not converge'
  if (abs(centre - 0.25_real64) > 1.0e-6_real64) error stop 'jacobi: the centre is not 1/4'

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= TIDAL_OK) then
       write (*, '(a)') 'jacobi: ' // what // ' failed: ' // tidal_status_message(status)
       write (*, '(a)') '  ' // tidal_last_error_message()
       error stop 1
    end if
  end subroutine check
end program jacobi

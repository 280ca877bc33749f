! jacobi_mpi — jacobi.f90 split across MPI ranks: each rank holds a band of grid rows in
! tidal-allocated memory, exchanges its edge rows with its neighbours every sweep straight from
! that memory, and declares the rows the next sweep reads and writes.
!
! The unit square, u = 1 on its top edge (j = n + 1) and 0 on the other three, n x n interior
! points. A fixed number of sweeps, so the answer does not depend on how many ranks share the
! work: every point is computed from the same neighbours in the same order, and the grid a run
! writes is the same bit for bit with 1 rank or with 4 (the `mpi` test suite checks that).
!
!   mpirun -np 4 jacobi-mpi [OUTPUT [SWEEPS]]
!
! OUTPUT (default jacobi-mpi.out): rank 0 writes the n x n interior there, raw 8-byte reals.
! Each rank picks its device by its node-local rank with device_selection = "local-rank"
! (TIDAL_DEVICE_SELECTION=local-rank), and writes its own statistics with TIDAL_STATS=stats-%r.json.
! The sweeps run on the host here; on a GPU the same bands would be handed to kernels, and the
! declarations would move them to the rank's device instead.
program jacobi_mpi
  use, intrinsic :: iso_fortran_env, only: real64, error_unit
  use, intrinsic :: iso_c_binding, only: c_null_ptr
  use mpi_f08
  use tidal
  implicit none
  integer, parameter :: n = 64
  real(real64), pointer :: u(:,:) => null(), u_new(:,:) => null(), swap(:,:) => null()
  real(real64), allocatable :: grid(:,:), band(:,:)
  integer, allocatable :: counts(:), displs(:)
  type(tidal_ctx) :: ctx
  type(tidal_system) :: system
  integer :: rank, ranks, status, sweep, sweeps, first, rows, below, above, r, length, unit
  character(len=4096) :: output, argument
  real(real64) :: centre

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  output = 'jacobi-mpi.out'
  call get_command_argument(1, argument, length)
  if (length > 0) output = argument(1:length)
  sweeps = 400
  call get_command_argument(2, argument, length)
  if (length > 0) read (argument(1:length), *) sweeps

  ! One context per rank, on the rank's device where device_selection says so.
  call tidal_init(ctx, status)
  call check(status, 'tidal_init')
  call tidal_get_system(ctx, system, status)
  call check(status, 'tidal_get_system')

  ! Rows 1..n split as evenly as they go; rank r owns rows first..first+rows-1, and keeps one
  ! halo row on each side (local 0 and rows + 1).
  allocate (counts(0:ranks - 1), displs(0:ranks - 1))
  do r = 0, ranks - 1
     counts(r) = n / ranks + merge(1, 0, r < mod(n, ranks))
  end do
  displs(0) = 0
  do r = 1, ranks - 1
     displs(r) = displs(r - 1) + counts(r - 1)
  end do
  rows = counts(rank)
  first = displs(rank) + 1
  below = merge(rank - 1, MPI_PROC_NULL, rank > 0)
  above = merge(rank + 1, MPI_PROC_NULL, rank < ranks - 1)

  call tidal_allocate(ctx, u, [n + 2, rows + 2], status, kind=TIDAL_KIND_MANAGED, tag='jacobi/u')
  call check(status, 'tidal_allocate u')
  call tidal_allocate(ctx, u_new, [n + 2, rows + 2], status, kind=TIDAL_KIND_MANAGED, tag='jacobi/u_new')
  call check(status, 'tidal_allocate u_new')
  ! Local rows 0 and rows + 1 are the halos: the same memory, indexed from 0 in j.
  swap => u
  u(1:, 0:) => swap
  swap => u_new
  u_new(1:, 0:) => swap
  write (*, '(a, i0, a, i0, a, i0, a, i0, a, i0, a)') 'jacobi-mpi: rank ', rank, ' of ', ranks, &
       ': rows ', first, '..', first + rows - 1, ' on device ', max(system%default_device, 0), &
       ' (tidal_system%default_device)'

  ! Boundary: the top edge (global row n + 1) is 1, everything else starts at 0.
  u = 0
  if (rank == ranks - 1) u(:, rows + 1) = 1
  u_new = u

  do sweep = 1, sweeps
     ! The rows this sweep reads (the band and its halos) and writes (the band), declared where
     ! the sweep runs, so tidal has them there before the first touch.
     call tidal_declare(ctx, c_null_ptr, [tidal_access_of(u, TIDAL_DEVICE_HOST, TIDAL_ACCESS_READ), &
                                          tidal_access_of(u_new(:, 1:rows), TIDAL_DEVICE_HOST, &
                                                          TIDAL_ACCESS_WRITE)], status)
     call check(status, 'tidal_declare')
     ! Halo rows, sent and received in place in tidal's memory.
     call MPI_Sendrecv(u(:, rows), n + 2, MPI_DOUBLE_PRECISION, above, 1, &
                       u(:, 0), n + 2, MPI_DOUBLE_PRECISION, below, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     call MPI_Sendrecv(u(:, 1), n + 2, MPI_DOUBLE_PRECISION, below, 2, &
                       u(:, rows + 1), n + 2, MPI_DOUBLE_PRECISION, above, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     if (rank == ranks - 1) u(:, rows + 1) = 1 ! the top edge is a boundary, never received
     u_new(2:n + 1, 1:rows) = 0.25_real64 * (u(1:n, 1:rows) + u(3:n + 2, 1:rows) + &
                                             u(2:n + 1, 0:rows - 1) + u(2:n + 1, 2:rows + 1))
     swap => u
     u => u_new
     u_new => swap
  end do

  ! Rank 0 gathers the interior and writes it.
  if (rank == 0) allocate (grid(n, n))
  if (rank /= 0) allocate (grid(1, 1))
  band = u(2:n + 1, 1:rows) ! contiguous, whatever the MPI library does with array sections
  call MPI_Gatherv(band, n * rows, MPI_DOUBLE_PRECISION, grid, counts * n, displs * n, &
                   MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  if (rank == 0) then
     centre = grid(n / 2, n / 2)
     open (newunit=unit, file=trim(output), access='stream', form='unformatted', status='replace')
     write (unit) grid
     close (unit)
     write (*, '(a, i0, a, i0, a, f14.10, 3a)') 'jacobi-mpi: ', sweeps, ' sweeps on ', ranks, &
          ' rank(s): u(n/2, n/2) = ', centre, ', grid written to ', trim(output), ''
  end if

  call tidal_deallocate(ctx, u, status)
  call check(status, 'tidal_deallocate u')
  call tidal_deallocate(ctx, u_new, status)
  call check(status, 'tidal_deallocate u_new')
  call tidal_finalize(ctx, status)
  call check(status, 'tidal_finalize')
  call MPI_Finalize()

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= TIDAL_OK) then
       write (error_unit, '(a, i0, a)') 'jacobi-mpi: rank ', rank, ': ' // what // ' failed: ' // &
            tidal_status_message(status)
       write (error_unit, '(a)') '  ' // tidal_last_error_message()
       call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program jacobi_mpi

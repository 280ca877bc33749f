! Batched copies from Fortran: columns of a host array into scattered columns of a device
! array and back in two tidal_copy_batch calls (entries from tidal_copy_item_of), on the
! default stream and on a caller's stream, and the mistakes the wrapper and the C call catch.
program test_copy_batch
  use, intrinsic :: iso_c_binding, only: c_null_ptr, c_ptr
  use, intrinsic :: iso_fortran_env, only: real64
  use tidal
  use tidal_c, only: tidal_stream_create, tidal_stream_destroy, tidal_stream_synchronize
  use tidal_test_support
  implicit none
  integer, parameter :: ROWS = 512, COLS = 16
  type(tidal_ctx) :: ctx
  real(real64), pointer :: host(:, :) => null(), dev(:, :) => null(), back(:, :) => null()
  type(tidal_copy_item) :: items(COLS)
  type(c_ptr) :: stream
  integer :: status, i, j

  call start_context(ctx)
  call tidal_allocate(ctx, host, [ROWS, COLS], status, kind=TIDAL_KIND_PINNED)
  call expect_status(status, TIDAL_OK, 'allocate pinned')
  call tidal_allocate(ctx, dev, [ROWS, COLS], status, kind=TIDAL_KIND_DEVICE)
  call expect_status(status, TIDAL_OK, 'allocate device')
  call tidal_allocate(ctx, back, [ROWS, COLS], status, kind=TIDAL_KIND_PAGEABLE)
  call expect_status(status, TIDAL_OK, 'allocate pageable')
  do j = 1, COLS
     host(:, j) = [(real(j * 1000 + i, real64), i = 1, ROWS)]
  end do

  ! Column j goes to column COLS+1-j of the device array, then back in order.
  do j = 1, COLS
     items(j) = tidal_copy_item_of(dev(:, COLS + 1 - j), host(:, j))
  end do
  call tidal_copy_batch(ctx, items, status)
  call expect_status(status, TIDAL_OK, 'host -> device batch on the default stream')
  do j = 1, COLS
     items(j) = tidal_copy_item_of(back(:, j), dev(:, COLS + 1 - j))
  end do
  stream = c_null_ptr
  call expect_status(tidal_stream_create(ctx%handle, 0, stream), TIDAL_OK, 'stream')
  call tidal_copy_batch(ctx, items, status, stream)
  call expect_status(status, TIDAL_OK, 'device -> host batch on a stream')
  call expect_status(tidal_stream_synchronize(ctx%handle, stream), TIDAL_OK, 'synchronize')
  call expect(all(back == host), 'every column came back')
  call expect_status(tidal_stream_destroy(ctx%handle, stream), TIDAL_OK, 'stream destroy')

  call tidal_copy_batch(ctx, [tidal_copy_item ::], status)
  call expect_status(status, TIDAL_OK, 'no entries')
  call tidal_copy_batch(ctx, [tidal_copy_item_of(dev(1:10, 1), host(1:11, 1))], status)
  call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'items(1) has arrays of different sizes', &
                    'arrays of different sizes')
  call tidal_copy_batch(ctx, [tidal_copy_item_of(dev(:, 1), host(:, 1)), &
                              tidal_copy_item_of(dev(:, 1), host(:, 2))], status)
  call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'overlapping destinations', &
                    'two entries into one column')

  call tidal_deallocate(ctx, host, status)
  call tidal_deallocate(ctx, dev, status)
  call tidal_deallocate(ctx, back, status)
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  write (*, '(a)') 'test_copy_batch: passed'
end program test_copy_batch

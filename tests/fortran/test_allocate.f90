! tidal_allocate / tidal_query / tidal_deallocate for every element type (real32, real64,
! int32, int64, complex64, complex128) and rank (1-4) on the simulated device: the arrays
! have the asked shape, hold what is written (all four ranks of a type are live at once, so
! overlapping memory would show), and tidal knows their kind, size and tag.
program test_allocate
  use, intrinsic :: iso_c_binding, only: c_associated, c_f_pointer, c_loc, c_ptr
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use tidal
  use tidal_test_support
  implicit none
  type(tidal_ctx) :: ctx
  integer :: status

  call start_context(ctx)
  call real32_arrays()
  call real64_arrays()
  call int32_arrays()
  call int64_arrays()
  call complex64_arrays()
  call complex128_arrays()
  call device_kind()
  call lifetime_of_tags()
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  call expect(.not. c_associated(ctx%handle), 'tidal_finalize clears the handle')
  write (*, '(a)') 'test_allocate: all types and ranks passed'

contains

  !> The allocation an array lies in has this kind, size and tag; a section of it (here the
  !! array's last element) names the same allocation.
  subroutine expect_allocation(array, last, kind, bytes, tag, what)
    type(*), dimension(..), intent(in) :: array
    type(*), dimension(..), intent(in) :: last
    integer, intent(in) :: kind
    integer(int64), intent(in) :: bytes
    character(len=*), intent(in) :: tag, what
    type(tidal_array_info) :: info, info_last
    call tidal_query(ctx, array, info, status)
    call expect_status(status, TIDAL_OK, 'tidal_query ' // what)
    if (kind /= TIDAL_KIND_AUTO) then
       call expect(info%kind == kind, what // ': kind is ' // tidal_kind_string(kind) // &
                   ', tidal says ' // tidal_kind_string(info%kind))
    else
       call expect(info%kind /= TIDAL_KIND_AUTO, what // ': an AUTO allocation has a real kind')
    end if
    call expect_equal_int(info%size, bytes, what // ': size in bytes')
    call expect(info%tag == tag, what // ': tag is "' // tag // '", tidal says "' // info%tag // '"')
    call expect(len(info%placed_by) > 0, what // ': placed_by names the decider')
    call expect(info%alignment > 0, what // ': alignment is known')
    call tidal_query(ctx, last, info_last, status)
    call expect_status(status, TIDAL_OK, 'tidal_query of the last element of ' // what)
    call expect(c_associated(info%base, info_last%base) .and. info_last%size == info%size, &
                what // ': the last element lies in the same allocation')
  end subroutine expect_allocation

  subroutine expect_freed(associated_after, what)
    logical, intent(in) :: associated_after
    character(len=*), intent(in) :: what
    call expect_status(status, TIDAL_OK, 'tidal_deallocate ' // what)
    call expect(.not. associated_after, 'tidal_deallocate nullifies ' // what)
  end subroutine expect_freed

  subroutine real32_arrays()
    real(real32), pointer :: a1(:) => null(), a2(:,:) => null(), a3(:,:,:) => null(), &
                             a4(:,:,:,:) => null()
    integer, parameter :: k = TIDAL_KIND_MANAGED
    integer(int64), parameter :: b = 4
    integer :: i
    call tidal_allocate(ctx, a1, [17], status, kind=k, tag='real32-r1')
    call expect_status(status, TIDAL_OK, 'allocate real32 rank 1')
    call tidal_allocate(ctx, a2, [3, 5], status, kind=k, tag='real32-r2')
    call expect_status(status, TIDAL_OK, 'allocate real32 rank 2')
    call tidal_allocate(ctx, a3, [2_int64, 3_int64, 4_int64], status, kind=k, tag='real32-r3')
    call expect_status(status, TIDAL_OK, 'allocate real32 rank 3')
    call tidal_allocate(ctx, a4, [2, 3, 1, 2], status, kind=k, tag='real32-r4')
    call expect_status(status, TIDAL_OK, 'allocate real32 rank 4')
    call expect(all(shape(a1) == [17]) .and. all(shape(a2) == [3, 5]) .and. &
                all(shape(a3) == [2, 3, 4]) .and. all(shape(a4) == [2, 3, 1, 2]), 'real32 shapes')
    call expect(all(lbound(a2) == 1) .and. all(lbound(a4) == 1), 'real32 lower bounds are 1')
    a1 = [(real(i, real32) / 4, i = 1, size(a1))]
    a2 = reshape([(real(i, real32) + 0.5, i = 1, size(a2))], shape(a2))
    a3 = reshape([(-real(i, real32), i = 1, size(a3))], shape(a3))
    a4 = reshape([(real(i, real32) * 3, i = 1, size(a4))], shape(a4))
    call expect(all(a1 == [(real(i, real32) / 4, i = 1, size(a1))]), 'real32 rank 1 reads back')
    call expect(all(pack(a2, .true.) == [(real(i, real32) + 0.5, i = 1, size(a2))]), &
                'real32 rank 2 reads back')
    call expect(a2(2, 4) == 11.5, 'real32 rank 2 is column-major')
    call expect(all(pack(a3, .true.) == [(-real(i, real32), i = 1, size(a3))]), &
                'real32 rank 3 reads back')
    call expect(all(pack(a4, .true.) == [(real(i, real32) * 3, i = 1, size(a4))]), &
                'real32 rank 4 reads back')
    call expect_allocation(a1, a1(17), k, 17 * b, 'real32-r1', 'real32 rank 1')
    call expect_allocation(a2, a2(3, 5), k, 15 * b, 'real32-r2', 'real32 rank 2')
    call expect_allocation(a3, a3(2, 3, 4), k, 24 * b, 'real32-r3', 'real32 rank 3')
    call expect_allocation(a4, a4(2, 3, 1, 2), k, 12 * b, 'real32-r4', 'real32 rank 4')
    call tidal_deallocate(ctx, a1, status); call expect_freed(associated(a1), 'real32 rank 1')
    call tidal_deallocate(ctx, a2, status); call expect_freed(associated(a2), 'real32 rank 2')
    call tidal_deallocate(ctx, a3, status); call expect_freed(associated(a3), 'real32 rank 3')
    call tidal_deallocate(ctx, a4, status); call expect_freed(associated(a4), 'real32 rank 4')
  end subroutine real32_arrays

  subroutine real64_arrays()
    real(real64), pointer :: a1(:) => null(), a2(:,:) => null(), a3(:,:,:) => null(), &
                             a4(:,:,:,:) => null()
    integer, parameter :: k = TIDAL_KIND_PINNED
    integer(int64), parameter :: b = 8
    integer :: i
    call tidal_allocate(ctx, a1, [1000_int64], status, kind=k, tag='real64-r1')
    call expect_status(status, TIDAL_OK, 'allocate real64 rank 1')
    call tidal_allocate(ctx, a2, [40, 25], status, kind=k, tag='real64-r2')
    call expect_status(status, TIDAL_OK, 'allocate real64 rank 2')
    call tidal_allocate(ctx, a3, [5, 6, 7], status, kind=k, tag='real64-r3')
    call expect_status(status, TIDAL_OK, 'allocate real64 rank 3')
    call tidal_allocate(ctx, a4, [2_int64, 2_int64, 2_int64, 2_int64], status, kind=k, &
                        tag='real64-r4')
    call expect_status(status, TIDAL_OK, 'allocate real64 rank 4')
    call expect(all(shape(a1) == [1000]) .and. all(shape(a2) == [40, 25]) .and. &
                all(shape(a3) == [5, 6, 7]) .and. all(shape(a4) == [2, 2, 2, 2]), 'real64 shapes')
    a1 = [(real(i, real64) * 1.0e-3_real64, i = 1, size(a1))]
    a2 = reshape([(real(i, real64) ** 2, i = 1, size(a2))], shape(a2))
    a3 = reshape([(1.0_real64 / i, i = 1, size(a3))], shape(a3))
    a4 = reshape([(real(-i, real64), i = 1, size(a4))], shape(a4))
    call expect(all(a1 == [(real(i, real64) * 1.0e-3_real64, i = 1, size(a1))]), &
                'real64 rank 1 reads back')
    call expect(all(pack(a2, .true.) == [(real(i, real64) ** 2, i = 1, size(a2))]), &
                'real64 rank 2 reads back')
    call expect(all(pack(a3, .true.) == [(1.0_real64 / i, i = 1, size(a3))]), &
                'real64 rank 3 reads back')
    call expect(all(pack(a4, .true.) == [(real(-i, real64), i = 1, size(a4))]), &
                'real64 rank 4 reads back')
    call expect(a3(5, 6, 7) == 1.0_real64 / 210, 'real64 rank 3 last element')
    call expect_allocation(a1, a1(1000), k, 1000 * b, 'real64-r1', 'real64 rank 1')
    call expect_allocation(a2, a2(40, 25), k, 1000 * b, 'real64-r2', 'real64 rank 2')
    call expect_allocation(a3, a3(5, 6, 7), k, 210 * b, 'real64-r3', 'real64 rank 3')
    call expect_allocation(a4, a4(2, 2, 2, 2), k, 16 * b, 'real64-r4', 'real64 rank 4')
    call tidal_deallocate(ctx, a1, status); call expect_freed(associated(a1), 'real64 rank 1')
    call tidal_deallocate(ctx, a2, status); call expect_freed(associated(a2), 'real64 rank 2')
    call tidal_deallocate(ctx, a3, status); call expect_freed(associated(a3), 'real64 rank 3')
    call tidal_deallocate(ctx, a4, status); call expect_freed(associated(a4), 'real64 rank 4')
  end subroutine real64_arrays

  subroutine int32_arrays()
    integer(int32), pointer :: a1(:) => null(), a2(:,:) => null(), a3(:,:,:) => null(), &
                               a4(:,:,:,:) => null()
    integer, parameter :: k = TIDAL_KIND_PAGEABLE
    integer(int64), parameter :: b = 4
    integer :: i
    call tidal_allocate(ctx, a1, [9], status, kind=k, tag='int32-r1', &
                        hints=ior(TIDAL_HINT_HOST_READ, TIDAL_HINT_HOST_WRITE))
    call expect_status(status, TIDAL_OK, 'allocate int32 rank 1')
    call tidal_allocate(ctx, a2, [4, 4], status, kind=k, tag='int32-r2')
    call expect_status(status, TIDAL_OK, 'allocate int32 rank 2')
    call tidal_allocate(ctx, a3, [3, 1, 3], status, kind=k, tag='int32-r3')
    call expect_status(status, TIDAL_OK, 'allocate int32 rank 3')
    call tidal_allocate(ctx, a4, [1, 2, 3, 4], status, kind=k, tag='int32-r4')
    call expect_status(status, TIDAL_OK, 'allocate int32 rank 4')
    a1 = [(i * 7, i = 1, size(a1))]
    a2 = reshape([(i - 100, i = 1, size(a2))], shape(a2))
    a3 = reshape([(huge(i) - i, i = 1, size(a3))], shape(a3))
    a4 = reshape([(i * i, i = 1, size(a4))], shape(a4))
    call expect(all(a1 == [(i * 7, i = 1, size(a1))]), 'int32 rank 1 reads back')
    call expect(all(pack(a2, .true.) == [(i - 100, i = 1, size(a2))]), 'int32 rank 2 reads back')
    call expect(all(pack(a3, .true.) == [(huge(i) - i, i = 1, size(a3))]), 'int32 rank 3 reads back')
    call expect(all(pack(a4, .true.) == [(i * i, i = 1, size(a4))]), 'int32 rank 4 reads back')
    call expect_allocation(a1, a1(9), k, 9 * b, 'int32-r1', 'int32 rank 1')
    call expect_allocation(a2, a2(4, 4), k, 16 * b, 'int32-r2', 'int32 rank 2')
    call expect_allocation(a3, a3(3, 1, 3), k, 9 * b, 'int32-r3', 'int32 rank 3')
    call expect_allocation(a4, a4(1, 2, 3, 4), k, 24 * b, 'int32-r4', 'int32 rank 4')
    block
      type(tidal_array_info) :: info
      call tidal_query(ctx, a1, info, status)
      call expect(info%hints == ior(TIDAL_HINT_HOST_READ, TIDAL_HINT_HOST_WRITE), &
                  'int32 rank 1 keeps its hints')
    end block
    call tidal_deallocate(ctx, a1, status); call expect_freed(associated(a1), 'int32 rank 1')
    call tidal_deallocate(ctx, a2, status); call expect_freed(associated(a2), 'int32 rank 2')
    call tidal_deallocate(ctx, a3, status); call expect_freed(associated(a3), 'int32 rank 3')
    call tidal_deallocate(ctx, a4, status); call expect_freed(associated(a4), 'int32 rank 4')
  end subroutine int32_arrays

  subroutine int64_arrays()
    integer(int64), pointer :: a1(:) => null(), a2(:,:) => null(), a3(:,:,:) => null(), &
                               a4(:,:,:,:) => null()
    integer, parameter :: k = TIDAL_KIND_MANAGED
    integer(int64), parameter :: b = 8
    integer(int64) :: i
    type(tidal_array_info) :: info
    ! On the second simulated device: the device index must reach the placement.
    call tidal_allocate(ctx, a1, [33], status, kind=k, tag='int64-r1', device=1)
    call expect_status(status, TIDAL_OK, 'allocate int64 rank 1')
    call tidal_allocate(ctx, a2, [6, 2], status, kind=k, tag='int64-r2', device=1)
    call expect_status(status, TIDAL_OK, 'allocate int64 rank 2')
    call tidal_allocate(ctx, a3, [2, 2, 9], status, kind=k, tag='int64-r3', device=0)
    call expect_status(status, TIDAL_OK, 'allocate int64 rank 3')
    call tidal_allocate(ctx, a4, [3_int64, 1_int64, 1_int64, 5_int64], status, kind=k, &
                        tag='int64-r4')
    call expect_status(status, TIDAL_OK, 'allocate int64 rank 4')
    a1 = [(i * 2_int64 ** 40, i = 1, size(a1, kind=int64))]
    a2 = reshape([(-i, i = 1, size(a2, kind=int64))], shape(a2))
    a3 = reshape([(i + 2_int64 ** 33, i = 1, size(a3, kind=int64))], shape(a3))
    a4 = reshape([(i * 11, i = 1, size(a4, kind=int64))], shape(a4))
    call expect(all(a1 == [(i * 2_int64 ** 40, i = 1, size(a1, kind=int64))]), &
                'int64 rank 1 reads back')
    call expect(all(pack(a2, .true.) == [(-i, i = 1, size(a2, kind=int64))]), &
                'int64 rank 2 reads back')
    call expect(all(pack(a3, .true.) == [(i + 2_int64 ** 33, i = 1, size(a3, kind=int64))]), &
                'int64 rank 3 reads back')
    call expect(all(pack(a4, .true.) == [(i * 11, i = 1, size(a4, kind=int64))]), &
                'int64 rank 4 reads back')
    call expect_allocation(a1, a1(33), k, 33 * b, 'int64-r1', 'int64 rank 1')
    call expect_allocation(a2, a2(6, 2), k, 12 * b, 'int64-r2', 'int64 rank 2')
    call expect_allocation(a3, a3(2, 2, 9), k, 36 * b, 'int64-r3', 'int64 rank 3')
    call expect_allocation(a4, a4(3, 1, 1, 5), k, 15 * b, 'int64-r4', 'int64 rank 4')
    call tidal_query(ctx, a1, info, status)
    call expect(info%device == 1, 'int64 rank 1 lives on device 1')
    call tidal_query(ctx, a3, info, status)
    call expect(info%device == 0, 'int64 rank 3 lives on device 0')
    call tidal_deallocate(ctx, a1, status); call expect_freed(associated(a1), 'int64 rank 1')
    call tidal_deallocate(ctx, a2, status); call expect_freed(associated(a2), 'int64 rank 2')
    call tidal_deallocate(ctx, a3, status); call expect_freed(associated(a3), 'int64 rank 3')
    call tidal_deallocate(ctx, a4, status); call expect_freed(associated(a4), 'int64 rank 4')
  end subroutine int64_arrays

  subroutine complex64_arrays()
    complex(real32), pointer :: a1(:) => null(), a2(:,:) => null(), a3(:,:,:) => null(), &
                                a4(:,:,:,:) => null()
    integer, parameter :: k = TIDAL_KIND_AUTO    ! the policy chain decides
    integer(int64), parameter :: b = 8
    integer :: i
    call tidal_allocate(ctx, a1, [5], status, tag='complex64-r1')
    call expect_status(status, TIDAL_OK, 'allocate complex64 rank 1')
    call tidal_allocate(ctx, a2, [2, 7], status, tag='complex64-r2')
    call expect_status(status, TIDAL_OK, 'allocate complex64 rank 2')
    call tidal_allocate(ctx, a3, [4, 4, 4], status, tag='complex64-r3')
    call expect_status(status, TIDAL_OK, 'allocate complex64 rank 3')
    call tidal_allocate(ctx, a4, [2, 1, 2, 1], status, tag='complex64-r4')
    call expect_status(status, TIDAL_OK, 'allocate complex64 rank 4')
    call expect_allocation(a1, a1(5), k, 5 * b, 'complex64-r1', 'complex64 rank 1')
    call expect_allocation(a2, a2(2, 7), k, 14 * b, 'complex64-r2', 'complex64 rank 2')
    call expect_allocation(a3, a3(4, 4, 4), k, 64 * b, 'complex64-r3', 'complex64 rank 3')
    call expect_allocation(a4, a4(2, 1, 2, 1), k, 4 * b, 'complex64-r4', 'complex64 rank 4')
    ! The simulated device's memory is host memory whatever the kind, so the host may write
    ! it here; on a GPU, device memory would need a kernel or a copy.
    a1 = [(cmplx(i, -i, real32), i = 1, size(a1))]
    a2 = reshape([(cmplx(0, i, real32), i = 1, size(a2))], shape(a2))
    a3 = reshape([(cmplx(i, 1, real32), i = 1, size(a3))], shape(a3))
    a4 = reshape([(cmplx(-i, -i, real32), i = 1, size(a4))], shape(a4))
    call expect(all(a1 == [(cmplx(i, -i, real32), i = 1, size(a1))]), 'complex64 rank 1 reads back')
    call expect(all(pack(a2, .true.) == [(cmplx(0, i, real32), i = 1, size(a2))]), &
                'complex64 rank 2 reads back')
    call expect(all(pack(a3, .true.) == [(cmplx(i, 1, real32), i = 1, size(a3))]), &
                'complex64 rank 3 reads back')
    call expect(all(pack(a4, .true.) == [(cmplx(-i, -i, real32), i = 1, size(a4))]), &
                'complex64 rank 4 reads back')
    call tidal_deallocate(ctx, a1, status); call expect_freed(associated(a1), 'complex64 rank 1')
    call tidal_deallocate(ctx, a2, status); call expect_freed(associated(a2), 'complex64 rank 2')
    call tidal_deallocate(ctx, a3, status); call expect_freed(associated(a3), 'complex64 rank 3')
    call tidal_deallocate(ctx, a4, status); call expect_freed(associated(a4), 'complex64 rank 4')
  end subroutine complex64_arrays

  subroutine complex128_arrays()
    complex(real64), pointer :: a1(:) => null(), a2(:,:) => null(), a3(:,:,:) => null(), &
                                a4(:,:,:,:) => null()
    integer, parameter :: k = TIDAL_KIND_MANAGED
    integer(int64), parameter :: b = 16
    integer :: i
    call tidal_allocate(ctx, a1, [3], status, kind=k, tag='complex128-r1', &
                        hints=TIDAL_HINT_READ_MOSTLY)
    call expect_status(status, TIDAL_OK, 'allocate complex128 rank 1')
    call tidal_allocate(ctx, a2, [8_int64, 8_int64], status, kind=k, tag='complex128-r2')
    call expect_status(status, TIDAL_OK, 'allocate complex128 rank 2')
    call tidal_allocate(ctx, a3, [1, 1, 1], status, kind=k, tag='complex128-r3')
    call expect_status(status, TIDAL_OK, 'allocate complex128 rank 3')
    call tidal_allocate(ctx, a4, [3, 3, 3, 3], status, kind=k, tag='complex128-r4')
    call expect_status(status, TIDAL_OK, 'allocate complex128 rank 4')
    a1 = [(cmplx(i, 2 * i, real64), i = 1, size(a1))]
    a2 = reshape([(cmplx(1.0_real64 / i, i, real64), i = 1, size(a2))], shape(a2))
    a3 = cmplx(42, -42, real64)
    a4 = reshape([(cmplx(i, 0, real64), i = 1, size(a4))], shape(a4))
    call expect(all(a1 == [(cmplx(i, 2 * i, real64), i = 1, size(a1))]), &
                'complex128 rank 1 reads back')
    call expect(all(pack(a2, .true.) == [(cmplx(1.0_real64 / i, i, real64), i = 1, size(a2))]), &
                'complex128 rank 2 reads back')
    call expect(a3(1, 1, 1) == cmplx(42, -42, real64), 'complex128 rank 3 reads back')
    call expect(all(pack(a4, .true.) == [(cmplx(i, 0, real64), i = 1, size(a4))]), &
                'complex128 rank 4 reads back')
    call expect_allocation(a1, a1(3), k, 3 * b, 'complex128-r1', 'complex128 rank 1')
    call expect_allocation(a2, a2(8, 8), k, 64 * b, 'complex128-r2', 'complex128 rank 2')
    call expect_allocation(a3, a3(1, 1, 1), k, 1 * b, 'complex128-r3', 'complex128 rank 3')
    call expect_allocation(a4, a4(3, 3, 3, 3), k, 81 * b, 'complex128-r4', 'complex128 rank 4')
    call tidal_deallocate(ctx, a1, status); call expect_freed(associated(a1), 'complex128 rank 1')
    call tidal_deallocate(ctx, a2, status); call expect_freed(associated(a2), 'complex128 rank 2')
    call tidal_deallocate(ctx, a3, status); call expect_freed(associated(a3), 'complex128 rank 3')
    call tidal_deallocate(ctx, a4, status); call expect_freed(associated(a4), 'complex128 rank 4')
  end subroutine complex128_arrays

  !> Device memory is placed and known like any other kind; the base tidal reports is the
  !! array's first element (module tidal hands out exactly what tidal_alloc returned).
  subroutine device_kind()
    real(real64), pointer :: d(:,:) => null()
    type(tidal_array_info) :: info
    call tidal_allocate(ctx, d, [64, 64], status, kind=TIDAL_KIND_DEVICE, device=0, &
                        tag='device-buffer', hints=TIDAL_HINT_DEVICE_ONLY)
    call expect_status(status, TIDAL_OK, 'allocate device memory')
    call tidal_query(ctx, d, info, status)
    call expect_status(status, TIDAL_OK, 'query device memory')
    call expect(info%kind == TIDAL_KIND_DEVICE .and. info%device == 0, 'device memory on device 0')
    call expect(c_associated(info%base, c_loc(d(1, 1))), 'base is the first element')
    call expect(info%hints == TIDAL_HINT_DEVICE_ONLY, 'device memory keeps its hints')
    call tidal_deallocate(ctx, d, status)
    call expect_freed(associated(d), 'device memory')
  end subroutine device_kind

  !> Tags: trailing blanks (Fortran padding) are dropped; the longest tag C accepts
  !! (TIDAL_TAG_MAX - 1 characters) comes back whole; no tag reads as "".
  subroutine lifetime_of_tags()
    real(real32), pointer :: a(:) => null(), c(:) => null(), u(:) => null()
    character(len=16) :: padded
    character(len=TIDAL_TAG_MAX - 1) :: longest
    type(tidal_array_info) :: info
    padded = 'weights'
    longest = repeat('t', len(longest))
    call tidal_allocate(ctx, a, [4], status, tag=padded)
    call expect_status(status, TIDAL_OK, 'allocate with a padded tag')
    call tidal_query(ctx, a, info, status)
    call expect(info%tag == 'weights' .and. len(info%tag) == 7, 'a padded tag loses its blanks')
    call tidal_allocate(ctx, c, [4], status, tag=longest)
    call expect_status(status, TIDAL_OK, 'allocate with the longest tag')
    call tidal_query(ctx, c, info, status)
    call expect(info%tag == longest .and. len(info%tag) == TIDAL_TAG_MAX - 1, &
                'the longest tag comes back whole')
    call tidal_allocate(ctx, u, [4], status)
    call expect_status(status, TIDAL_OK, 'allocate without a tag')
    call tidal_query(ctx, u, info, status)
    call expect(len(info%tag) == 0, 'an untagged allocation reads as ""')
    call tidal_deallocate(ctx, a, status); call expect_freed(associated(a), 'padded tag')
    call tidal_deallocate(ctx, c, status); call expect_freed(associated(c), 'longest tag')
    call tidal_deallocate(ctx, u, status); call expect_freed(associated(u), 'untagged')
  end subroutine lifetime_of_tags
end program test_allocate

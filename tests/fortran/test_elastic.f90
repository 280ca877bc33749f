! Elastic device memory from Fortran on the simulated device: an array offloaded by tag and
! restored comes back bit-identical at the same address; a section offloads and restores the
! chunks it touches; a discarded array is freed while offloaded; the queries, the result type
! and the migration statistics report it; bad calls get a status and a message. The simulated
! device's memory is host memory, so the host reads and writes resident chunks directly (an
! offloaded chunk is unmapped there too: touching it would fault, as on a GPU).
program test_elastic
  use, intrinsic :: iso_c_binding, only: c_loc, c_ptr, c_associated
  use, intrinsic :: iso_fortran_env, only: int64, real32, real64
  use tidal
  use tidal_test_support
  implicit none
  integer(int64), parameter :: MIB = 1048576_int64
  ! 4 MiB chunks: a 1024 x 1024 real64 array is two of them, 512 columns each.
  character(len=*), parameter :: CONFIG = 'runtime = "sim"' // LF // &
                                          '[elastic]' // LF // 'chunk_size = "4MiB"' // LF // &
                                          '[pool]' // LF // 'enabled = false' // LF
  type(tidal_ctx) :: ctx
  integer :: status

  call tidal_init(ctx, status, config_string=CONFIG)
  call expect_status(status, TIDAL_OK, 'tidal_init with the simulated device')
  call round_trip_by_tag()
  call sections_and_read_only()
  call discard_and_free()
  call errors()
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  write (*, '(a)') 'test_elastic: passed'

contains

  subroutine fill(w)
    real(real64), intent(out) :: w(:,:)
    integer :: i, j
    do j = 1, size(w, 2)
       do i = 1, size(w, 1)
          w(i, j) = real(i, real64) + 1.0e4_real64 * real(j, real64) + 0.125_real64
       end do
    end do
  end subroutine fill

  logical function holds(w)
    real(real64), intent(in) :: w(:,:)
    real(real64), allocatable :: expected(:,:)
    allocate(expected(size(w, 1), size(w, 2)))
    call fill(expected)
    holds = all(w == expected)
  end function holds

  subroutine expect_bytes(w, resident, offloaded, discarded, what)
    real(real64), intent(in) :: w(:,:)
    integer(int64), intent(in) :: resident, offloaded, discarded
    character(len=*), intent(in) :: what
    type(tidal_array_info) :: info
    call tidal_query(ctx, w, info, status)
    call expect_status(status, TIDAL_OK, 'tidal_query ' // what)
    call expect(info%kind == TIDAL_KIND_ELASTIC, 'elastic memory, ' // what)
    call expect_equal_int(info%resident_bytes, resident, 'resident bytes ' // what)
    call expect_equal_int(info%offloaded_bytes, offloaded, 'offloaded bytes ' // what)
    call expect_equal_int(info%discarded_bytes, discarded, 'discarded bytes ' // what)
  end subroutine expect_bytes

  subroutine round_trip_by_tag()
    real(real64), pointer :: w(:,:) => null()
    type(c_ptr) :: address
    type(tidal_elastic_result) :: r
    type(tidal_migration_stats) :: before, after
    call tidal_allocate(ctx, w, [1024, 1024], status, kind=TIDAL_KIND_ELASTIC, device=0, &
                        tag='weights.fortran')
    call expect_status(status, TIDAL_OK, 'allocate elastic memory')
    address = c_loc(w)
    call fill(w)
    call expect_bytes(w, 8 * MIB, 0_int64, 0_int64, 'after allocation')
    call tidal_migration_stats_get(ctx, 0, before, status)
    call expect_status(status, TIDAL_OK, 'migration statistics before')

    call tidal_offload(ctx, 'weights*', status, result=r)
    call expect_status(status, TIDAL_OK, 'offload weights*')
    call expect_equal_int(r%allocations, 1_int64, 'the offload matched one allocation')
    call expect_equal_int(r%copied_bytes, 8 * MIB, 'the offload copied both chunks')
    call expect_equal_int(r%released_bytes, 8 * MIB, 'the offload released both chunks')
    call expect_equal_int(r%discarded_bytes, 0_int64, 'the offload discarded nothing')
    call expect_bytes(w, 0_int64, 8 * MIB, 0_int64, 'after the offload')

    call tidal_offload(ctx, 'nothing*', status, result=r)
    call expect_status(status, TIDAL_OK, 'offload of a tag that matches nothing')
    call expect_equal_int(r%allocations, 0_int64, 'an unmatched tag matches no allocation')
    call expect_equal_int(r%copied_bytes, 0_int64, 'an unmatched tag copies nothing')

    call tidal_restore(ctx, 'weights*', status, result=r)
    call expect_status(status, TIDAL_OK, 'restore weights*')
    call expect_equal_int(r%allocations, 1_int64, 'the restore matched one allocation')
    call expect_equal_int(r%mapped_bytes, 8 * MIB, 'the restore mapped both chunks')
    call expect_equal_int(r%copied_bytes, 8 * MIB, 'the restore copied both chunks back')
    call expect(c_associated(address, c_loc(w)), 'the array keeps its address')
    call expect(holds(w), 'the array holds the same values after offload and restore')
    call expect_bytes(w, 8 * MIB, 0_int64, 0_int64, 'after the restore')

    call tidal_migration_stats_get(ctx, 0, after, status)
    call expect_status(status, TIDAL_OK, 'migration statistics after')
    call expect_equal_int(after%elastic_offloads - before%elastic_offloads, 2_int64, &
                          'two chunks offloaded')
    call expect_equal_int(after%elastic_restores - before%elastic_restores, 2_int64, &
                          'two chunks restored')
    call expect_equal_int(after%elastic_copied_out - before%elastic_copied_out, 8 * MIB, &
                          'bytes copied out')
    call expect_equal_int(after%elastic_copied_in - before%elastic_copied_in, 8 * MIB, &
                          'bytes copied in')
    call tidal_deallocate(ctx, w, status)
    call expect_status(status, TIDAL_OK, 'deallocate elastic memory')
  end subroutine round_trip_by_tag

  subroutine sections_and_read_only()
    real(real64), pointer :: w(:,:) => null()
    type(tidal_elastic_result) :: r
    type(tidal_range) :: range
    call tidal_allocate(ctx, w, [1024, 1024], status, kind=TIDAL_KIND_ELASTIC, device=0, &
                        tag='sections')
    call expect_status(status, TIDAL_OK, 'allocate elastic memory for sections')
    call fill(w)
    ! Columns 600-700 lie in the second chunk only.
    call tidal_offload_range(ctx, w(:, 600:700), status, result=r)
    call expect_status(status, TIDAL_OK, 'offload a section')
    call expect_equal_int(r%copied_bytes, 4 * MIB, 'a section offloads the chunk it touches')
    call expect_bytes(w, 4 * MIB, 4 * MIB, 0_int64, 'after offloading a section')
    call tidal_query_range(ctx, w(:, 1:512), range, status)
    call expect_status(status, TIDAL_OK, 'range query of the first chunk')
    call expect_equal_int(range%resident_bytes, 4 * MIB, 'the first chunk is resident')
    call expect_equal_int(range%offloaded_bytes, 0_int64, 'the first chunk is not offloaded')
    call expect(range%last_prefetch_location == TIDAL_LOCATION_NONE, &
                'elastic memory has no prefetch location')
    call tidal_query_range(ctx, w(1, 513:), range, status)
    call expect_status(status, TIDAL_OK, 'range query of a strided row of the second chunk')
    call expect_equal_int(range%offloaded_bytes, 4 * MIB, 'the second chunk is offloaded')
    call expect(holds(w(:, 1:512)), 'the resident chunk stays usable')

    call tidal_restore_range(ctx, w(7, 650), status, flags=TIDAL_RESTORE_READ_ONLY, result=r)
    call expect_status(status, TIDAL_OK, 'restore a single element''s chunk, read-only')
    call expect_equal_int(r%mapped_bytes, 4 * MIB, 'the element''s chunk is mapped')
    call expect(holds(w), 'the section comes back bit-identical')
    ! The read-only restore left its home current: offloading it again copies nothing, while
    ! the first chunk (written since allocation) is copied.
    call tidal_offload(ctx, 'sections', status, result=r)
    call expect_status(status, TIDAL_OK, 'offload after a read-only restore')
    call expect_equal_int(r%copied_bytes, 4 * MIB, 'only the written chunk is copied')
    call expect_equal_int(r%released_bytes, 8 * MIB, 'both chunks are released')
    call tidal_restore(ctx, 'sections', status)
    call expect_status(status, TIDAL_OK, 'restore sections without a result')
    call expect(holds(w), 'both chunks come back bit-identical')
    call tidal_deallocate(ctx, w, status)
    call expect_status(status, TIDAL_OK, 'deallocate the sections array')
  end subroutine sections_and_read_only

  subroutine discard_and_free()
    real(real32), pointer :: kv(:) => null()
    type(tidal_elastic_result) :: r
    type(tidal_array_info) :: info
    call tidal_allocate(ctx, kv, [1048576], status, kind=TIDAL_KIND_ELASTIC, device=0, tag='kv')
    call expect_status(status, TIDAL_OK, 'allocate the KV cache')
    kv = 1
    call tidal_offload(ctx, 'kv', status, flags=ior(TIDAL_OFFLOAD_DISCARD, &
                       TIDAL_OFFLOAD_KEEP_PHYSICAL), result=r)
    call expect_status(status, TIDAL_OK, 'discard the KV cache, keeping the chunks')
    call expect_equal_int(r%discarded_bytes, 4 * MIB, 'the KV cache is discarded')
    call expect_equal_int(r%copied_bytes, 0_int64, 'a discard copies nothing')
    call expect_equal_int(r%pooled_bytes, 4 * MIB, 'its chunk stays in tidal''s pool')
    call tidal_query(ctx, kv, info, status)
    call expect_status(status, TIDAL_OK, 'query the discarded KV cache')
    call expect_equal_int(info%discarded_bytes, 4 * MIB, 'the query reports discarded bytes')
    call tidal_deallocate(ctx, kv, status)
    call expect_status(status, TIDAL_OK, 'deallocate a discarded array')
    call expect(.not. associated(kv), 'the discarded array is nullified')
  end subroutine discard_and_free

  subroutine errors()
    real(real64), pointer :: m(:) => null()
    real(real64), pointer :: none(:) => null()
    type(tidal_ctx) :: uninitialised
    call tidal_allocate(ctx, m, [1024], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate managed memory')
    call tidal_offload_range(ctx, m, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'elastic', &
                      'offload_range of managed memory')
    call tidal_restore(ctx, '*', status, flags=8)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'flag', 'restore with an unknown flag')
    call tidal_offload(uninitialised, '*', status)
    call expect_status(status, TIDAL_ERROR_INVALID_ARGUMENT, 'offload without a context')
    allocate(none(0))
    call tidal_restore_range(ctx, none, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'no elements', &
                      'restore_range of an empty array')
    deallocate(none)
    call tidal_deallocate(ctx, m, status)
    call expect_status(status, TIDAL_OK, 'deallocate managed memory')
  end subroutine errors
end program test_elastic

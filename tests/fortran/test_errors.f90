! Every way a Fortran caller can get it wrong comes back as a status and a message that says
! what happened; nothing stops the program, and a failed call leaves the arrays as they were.
program test_errors
  use, intrinsic :: iso_fortran_env, only: int64, real32, real64
  use tidal
  use tidal_test_support
  implicit none
  type(tidal_ctx) :: ctx
  integer :: status

  call configuration_errors()
  call start_context(ctx)
  call allocation_errors()
  call allocate_into_associated_pointers()
  call deallocation_errors()
  call deallocation_of_sections()
  call query_errors()
  call newest_message_wins()
  call missing_context()
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize')
  call tidal_finalize(ctx, status)
  call expect_status(status, TIDAL_OK, 'tidal_finalize of a finalized context does nothing')
  write (*, '(a)') 'test_errors: passed'

contains

  subroutine configuration_errors()
    type(tidal_ctx) :: bad
    ! Line 4 holds a key [sim] does not have; the message must say where.
    call tidal_init(bad, status, config_string='runtime = "sim"' // LF // '[sim]' // LF // &
                    'devices = 2' // LF // 'bogus = 1' // LF)
    call expect_error(status, TIDAL_ERROR_CONFIG, ':4:', 'unknown key: the message has its line')
    call expect_contains(tidal_last_error_message(), 'bogus', 'unknown key: the message names it')
    call expect(.not. c_ptr_set(bad), 'a failed tidal_init leaves no context')
    ! A TOML syntax error on line 2.
    call tidal_init(bad, status, config_string='runtime = "sim"' // LF // '[sim' // LF)
    call expect_error(status, TIDAL_ERROR_CONFIG, ':2:', 'TOML syntax error: the message has its line')
    ! A misspelt key at the top level (line 1) gets a suggestion.
    call tidal_init(bad, status, config_string='runtme = "sim"' // LF)
    call expect_error(status, TIDAL_ERROR_CONFIG, ':1:', 'misspelt key: the message has its line')
    call expect_contains(tidal_last_error_message(), 'runtime', 'misspelt key: a suggestion')
    call tidal_init(bad, status, config_file='/nonexistent/tidal-fortran.toml    ')
    call expect_error(status, TIDAL_ERROR_CONFIG, "'/nonexistent/tidal-fortran.toml'", &
                      'a missing file (trailing blanks dropped) is named')
    call tidal_init(bad, status, config_file='x.toml', config_string='runtime = "sim"')
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not both', &
                      'config_file and config_string together')
  end subroutine configuration_errors

  logical function c_ptr_set(context)
    use, intrinsic :: iso_c_binding, only: c_associated
    type(tidal_ctx), intent(in) :: context
    c_ptr_set = c_associated(context%handle)
  end function c_ptr_set

  subroutine allocation_errors()
    real(real64), pointer :: a(:) => null(), b(:,:) => null()
    real(real32), pointer :: c(:,:,:,:) => null()
    call tidal_allocate(ctx, a, [0], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'size is 0', 'size 0')
    call expect(.not. associated(a), 'a failed allocation leaves the pointer disassociated')
    call tidal_allocate(ctx, c, [4, 4, 0, 4], status)
    call expect_status(status, TIDAL_ERROR_INVALID_ARGUMENT, 'a zero extent in rank 4')
    call tidal_allocate(ctx, b, [4, -3], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'extent 2 of shape is negative (-3)', &
                      'a negative extent')
    call tidal_allocate(ctx, b, [16], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'shape has 1 extents for an array of rank 2', &
                      'a shape of the wrong length')
    call tidal_allocate(ctx, b, [huge(0_int64), 2_int64], status)
    call expect_error(status, TIDAL_ERROR_OUT_OF_MEMORY, '2**63', 'a shape past 2**63 bytes')
    call tidal_allocate(ctx, a, [2_int64 ** 50], status)
    call expect_error(status, TIDAL_ERROR_OUT_OF_MEMORY, 'sim runtime', &
                      '8 PiB is more than a simulated device has')
    call tidal_allocate(ctx, a, [10], status, kind=TIDAL_KIND_MANAGED, device=9)
    call expect_error(status, TIDAL_ERROR_NOT_FOUND, 'device 9', 'a device that does not exist')
    call tidal_allocate(ctx, a, [10], status, kind=42)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'kind 42', 'a kind that does not exist')
    call tidal_allocate(ctx, a, [10], status, hints=256)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'hint', 'unknown hint bits')
    call tidal_allocate(ctx, a, [10], status, tag=repeat('x', TIDAL_TAG_MAX))
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tag', 'a tag of TIDAL_TAG_MAX characters')
    call tidal_allocate(ctx, a, [10], status, kind=TIDAL_KIND_DEVICE_FINE)
    call expect_status(status, TIDAL_ERROR_NOT_SUPPORTED, 'fine-grained memory on a simulated NVIDIA device')
    call expect(.not. associated(a) .and. .not. associated(b) .and. .not. associated(c), &
                'no failed allocation associated a pointer')
  end subroutine allocation_errors

  !> tidal_allocate refuses a pointer that still holds a live tidal allocation (its first
  !! element is the allocation's base), as Fortran's allocate refuses an allocated array:
  !! otherwise that allocation could be lost. The pointer and the memory stay as they were.
  !! Anything else a pointer may be associated with is let go, as Fortran's allocate does.
  subroutine allocate_into_associated_pointers()
    use, intrinsic :: iso_c_binding, only: c_loc, c_associated
    real(real64), pointer :: a(:) => null(), alias(:) => null(), part(:) => null()
    real(real64), pointer :: mine(:) => null(), view(:) => null(), stale(:) => null()
    integer(int64), pointer :: b(:,:) => null()
    real(real64), pointer :: first_a
    call tidal_allocate(ctx, a, [10], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate a')
    a = 7
    first_a => a(1)
    call tidal_allocate(ctx, a, [20], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'still associated with a live tidal allocation', &
                      'allocate into a pointer that holds an allocation (int32 shape)')
    call expect_contains(tidal_last_error_message(), 'nullify', 'the message says what to do')
    call tidal_allocate(ctx, a, [20_int64], status)
    call expect_status(status, TIDAL_ERROR_INVALID_ARGUMENT, 'the same with an int64 shape')
    call expect(associated(a) .and. size(a) == 10, 'a refused allocate leaves the pointer as it was')
    call expect(c_associated(c_loc(a(1)), c_loc(first_a)) .and. all(a == 7), &
                'a refused allocate leaves the memory as it was')
    ! An alias of the whole allocation holds it just as well.
    alias => a
    call tidal_allocate(ctx, alias, [4], status)
    call expect_status(status, TIDAL_ERROR_INVALID_ARGUMENT, 'allocate into an alias of a live allocation')
    nullify(alias)
    call tidal_allocate(ctx, alias, [4], status)
    call expect_status(status, TIDAL_OK, 'allocate into the alias once nullified')
    call tidal_deallocate(ctx, alias, status)
    call expect_status(status, TIDAL_OK, 'deallocate the alias''s new array')
    ! A section inside an allocation cannot free it: re-pointing it loses nothing.
    part => a(3:)
    call tidal_allocate(ctx, part, [4], status)
    call expect_status(status, TIDAL_OK, 'allocate into a pointer to a section inside an allocation')
    call expect(size(part) == 4 .and. all(a == 7), 'the section pointer is re-pointed, a untouched')
    call tidal_deallocate(ctx, part, status)
    call expect_status(status, TIDAL_OK, 'deallocate the re-pointed section pointer')
    ! Memory Fortran allocated: tidal does not own it, so the pointer is simply re-pointed.
    allocate(mine(8))
    view => mine
    call tidal_allocate(ctx, view, [4], status)
    call expect_status(status, TIDAL_OK, 'allocate into a pointer to Fortran memory')
    call tidal_deallocate(ctx, view, status)
    call expect_status(status, TIDAL_OK, 'deallocate it')
    deallocate(mine)
    ! A stale alias of freed tidal memory blocks nothing.
    stale => a
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate a')
    call tidal_allocate(ctx, a, [20], status)
    call expect_status(status, TIDAL_OK, 'allocate into a once deallocated')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate a again')
    call tidal_allocate(ctx, stale, [3], status)
    call expect_status(status, TIDAL_OK, 'allocate into a stale alias of freed memory')
    call tidal_deallocate(ctx, stale, status)
    call expect_status(status, TIDAL_OK, 'deallocate the former stale alias')
    ! Another rank and type through the same rule.
    call tidal_allocate(ctx, b, [3, 3], status)
    call expect_status(status, TIDAL_OK, 'allocate b')
    call tidal_allocate(ctx, b, [3, 3], status)
    call expect_status(status, TIDAL_ERROR_INVALID_ARGUMENT, 'allocate into b again')
    call tidal_deallocate(ctx, b, status)
    call expect_status(status, TIDAL_OK, 'deallocate b')
  end subroutine allocate_into_associated_pointers

  !> tidal_deallocate frees only through the whole array: a section is refused with nothing
  !! freed, whether it starts inside the allocation or at its base (shorter, or spanning the
  !! whole allocation with gaps). A contiguous pointer to all of it, any shape, is the array.
  subroutine deallocation_of_sections()
    real(real64), pointer, contiguous :: a(:,:)
    real(real64), pointer :: head(:,:) => null(), strided(:,:) => null(), reversed(:) => null()
    real(real64), pointer :: row(:) => null(), flat(:) => null()
    nullify(a)
    call tidal_allocate(ctx, a, [10, 10], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate')
    a = 5
    head => a(:, 1:4)
    call tidal_deallocate(ctx, head, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'a section of its allocation (it spans 320 of its 800 bytes)', &
                      'deallocate of a shorter section that starts at the allocation')
    call expect_contains(tidal_last_error_message(), 'nothing was freed', 'the message says nothing was freed')
    call expect(associated(head), 'the refused section pointer stays associated')
    row => a(1, :)
    call tidal_deallocate(ctx, row, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not contiguously', &
                      'deallocate of a strided section that starts at the allocation')
    strided => a(1:10:9, :)
    call tidal_deallocate(ctx, strided, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'spans 800 of its 800 bytes, not contiguously', &
                      'deallocate of a strided section as long as the allocation')
    flat(1:100) => a
    reversed => flat(100:1:-1)
    call tidal_deallocate(ctx, reversed, status)
    call expect_status(status, TIDAL_ERROR_INVALID_ARGUMENT, 'deallocate of the whole array reversed')
    call expect(all(a == 5), 'no refused deallocate freed or changed anything')
    ! The memory is still the program's: a query finds it, and the whole array frees it.
    call tidal_deallocate(ctx, flat, status)
    call expect_status(status, TIDAL_OK, 'deallocate through a contiguous pointer to all of it')
    call expect(.not. associated(flat), 'and it is nullified')
    nullify(a, head, row, strided, reversed)
  end subroutine deallocation_of_sections

  subroutine deallocation_errors()
    real(real64), pointer :: a(:,:) => null(), alias(:,:) => null(), inner(:,:) => null()
    real(real64), pointer :: mine(:) => null()
    call tidal_allocate(ctx, a, [10, 10], status, kind=TIDAL_KIND_MANAGED)
    call expect_status(status, TIDAL_OK, 'allocate')
    a = 3
    ! A section that does not start at the allocation's base: nothing is freed.
    inner => a(3:, :)
    call tidal_deallocate(ctx, inner, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'interior pointer', &
                      'deallocate of an interior section')
    call expect(associated(inner), 'a failed deallocate leaves the pointer associated')
    call expect(all(a == 3), 'a failed deallocate frees nothing')
    ! Memory Fortran allocated itself.
    allocate(mine(8))
    call tidal_deallocate(ctx, mine, status)
    call expect_status(status, TIDAL_ERROR_UNKNOWN_POINTER, 'deallocate of a Fortran-allocated array')
    call expect(associated(mine), 'the Fortran array is still associated')
    deallocate(mine)
    ! Double deallocate: through the same pointer (now disassociated) and through an alias.
    alias => a
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate')
    call tidal_deallocate(ctx, a, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not associated', &
                      'double deallocate through the same pointer')
    call tidal_deallocate(ctx, alias, status)
    call expect_status(status, TIDAL_ERROR_UNKNOWN_POINTER, 'double deallocate through an alias')
    call expect_contains(tidal_last_error_message(), 'tidal_free', 'the alias case is the C library''s')
  end subroutine deallocation_errors

  subroutine query_errors()
    real(real64) :: own(16)
    type(tidal_array_info) :: info
    type(tidal_device) :: device
    own = 0
    call tidal_query(ctx, own, info, status)
    call expect_status(status, TIDAL_ERROR_UNKNOWN_POINTER, 'query of a Fortran array')
    call expect(len(info%tag) == 0 .and. len(info%placed_by) == 0, &
                'a failed query leaves empty strings, not unallocated ones')
    call tidal_query(ctx, own(9:8), info, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'no elements', 'query of an empty section')
    call tidal_get_device(ctx, 5, device, status)
    call expect_status(status, TIDAL_ERROR_NOT_FOUND, 'device 5 of 2')
    call tidal_get_device(ctx, -1, device, status)
    call expect_status(status, TIDAL_ERROR_NOT_FOUND, 'device -1')
  end subroutine query_errors

  !> tidal_last_error_message() follows the newest failure, whether the binding or the C
  !! library found it; a later success does not replace it.
  subroutine newest_message_wins()
    real(real64), pointer :: a(:) => null(), b(:,:) => null(), c(:) => null()
    real(real64), target :: own(4)
    call tidal_allocate(ctx, a, [0], status)                     ! C library's check
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'size is 0', 'the C library''s message')
    call tidal_allocate(ctx, b, [1, -1], status)                 ! the binding's check
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'negative', 'then the binding''s message')
    call tidal_allocate(ctx, a, [4], status)                     ! success
    call expect_status(status, TIDAL_OK, 'then a success')
    call expect_contains(tidal_last_error_message(), 'negative', 'a success keeps the newest failure')
    c => own                                                     ! the binding asks tidal about it
    call tidal_allocate(ctx, c, [4], status)
    call expect_status(status, TIDAL_OK, 'a success re-pointing a pointer to Fortran memory')
    call expect_contains(tidal_last_error_message(), 'negative', 'the binding''s own question left no message')
    call tidal_allocate(ctx, b, [0, 4], status)                  ! the C library again
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'size is 0', &
                      'a C failure after the binding''s is the newest')
    call expect(index(tidal_last_error_message(), 'negative') == 0, 'the old message is gone')
    call tidal_deallocate(ctx, c, status)
    call expect_status(status, TIDAL_OK, 'deallocate c')
    c => own
    call tidal_allocate(ctx, c, [4], status)
    call expect_status(status, TIDAL_OK, 'a success re-pointing a pointer after a C failure')
    call expect_contains(tidal_last_error_message(), 'size is 0', 'the C library''s message is kept too')
    call tidal_deallocate(ctx, a, status)
    call expect_status(status, TIDAL_OK, 'deallocate a')
    call tidal_deallocate(ctx, c, status)
    call expect_status(status, TIDAL_OK, 'deallocate c')
  end subroutine newest_message_wins

  subroutine missing_context()
    type(tidal_ctx) :: none
    real(real64), pointer :: a(:) => null()
    real(real64), target :: t(4)
    type(tidal_array_info) :: info
    type(tidal_system) :: system
    character(len=:), allocatable :: text
    call tidal_allocate(none, a, [4], status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_allocate: the context is not initialised', &
                      'allocate without tidal_init')
    a => t
    call tidal_deallocate(none, a, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_deallocate: the context is not initialised', &
                      'deallocate without tidal_init')
    call expect(associated(a), 'the pointer is untouched')
    call tidal_query(none, t, info, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not initialised', 'query without tidal_init')
    call tidal_get_system(none, system, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not initialised', &
                      'tidal_get_system without tidal_init')
    call tidal_config_text(none, text, status)
    call expect_error(status, TIDAL_ERROR_INVALID_ARGUMENT, 'not initialised', &
                      'tidal_config_text without tidal_init')
    call tidal_finalize(none, status)
    call expect_status(status, TIDAL_OK, 'finalize without tidal_init does nothing')
  end subroutine missing_context
end program test_errors

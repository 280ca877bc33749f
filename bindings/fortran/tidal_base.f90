! tidal — what module tidal and its generated array procedures stand on: the context type,
! the binding's own error reporting, C string conversion, and byte-level allocate/free.
!
! Not meant to be used directly: `use tidal` re-exports everything public here. It is a module
! of its own only because the generated module tidal_arrays (generate.py) needs the context
! type and module tidal needs tidal_arrays; a single module cannot be both.
module tidal_base
  use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_f_pointer, c_int, c_int32_t, &
                                         c_loc, c_null_char, c_null_ptr, c_ptr, c_size_t, &
                                         c_sizeof
  use, intrinsic :: iso_fortran_env, only: int64
  use tidal_constants
  use tidal_c, only: tidal_alloc, tidal_alloc_desc, tidal_free, tidal_last_error, &
                     tidal_pointer_query, tidal_pointer_info
  implicit none
  private
  public :: tidal_ctx
  public :: tidal_from_c, tidal_fail, tidal_has_context, tidal_c_string, tidal_f_string, &
            tidal_f_chars, tidal_array_span, tidal_pending_error, tidal_allocate_bytes, &
            tidal_deallocate_array, tidal_holds_allocation

  !> A tidal context: one configuration, one device runtime, one set of policies.
  !! Copies share the same context; tidal_finalize ends it for all of them. `handle` is the C
  !! `tidal_context *`, public so that the raw interfaces of module tidal_c can be called with
  !! it; c_null_ptr means "not initialised".
  type :: tidal_ctx
     type(c_ptr) :: handle = c_null_ptr
  end type tidal_ctx

  ! ---- C helpers of this binding (array_span.c, binding_error.c) ------------------------
  interface
     subroutine tidal_array_span(array, lowest, bytes) bind(C, name='tidal_fortran_array_span')
       import :: c_ptr, c_size_t
       type(*), dimension(..), intent(in) :: array
       type(c_ptr), intent(out) :: lowest
       integer(c_size_t), intent(out) :: bytes
     end subroutine tidal_array_span

     subroutine c_set_error(message, length) bind(C, name='tidal_fortran_set_error')
       import :: c_char, c_size_t
       character(kind=c_char), intent(in) :: message(*)
       integer(c_size_t), value :: length
     end subroutine c_set_error

     subroutine c_clear_error() bind(C, name='tidal_fortran_clear_error')
     end subroutine c_clear_error

     function c_strlen(text) result(length) bind(C, name='strlen')
       import :: c_ptr, c_size_t
       type(c_ptr), value :: text
       integer(c_size_t) :: length
     end function c_strlen

     function c_pending_error() result(text) bind(C, name='tidal_fortran_pending_error')
       import :: c_ptr
       type(c_ptr) :: text
     end function c_pending_error
  end interface

contains

  !> Records a failure found by the binding itself: `status` gets `code` and
  !! tidal_last_error_message() will return `message` on this thread.
  subroutine tidal_fail(status, code, message)
    integer, intent(out) :: status
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: message
    character(kind=c_char) :: chars(len(message))
    integer :: i
    do i = 1, len(message)
       chars(i) = message(i:i)
    end do
    call c_set_error(chars, int(len(message), c_size_t))
    status = code
  end subroutine tidal_fail

  !> Takes a status the C library returned. A failure there recorded a message newer than any
  !! the binding holds, so the binding's own is dropped and tidal_last_error_message() reads
  !! the C library's. Every C call of module tidal goes through here.
  subroutine tidal_from_c(code, status)
    integer(c_int), intent(in) :: code
    integer, intent(out) :: status
    status = code
    if (code /= TIDAL_OK) call c_clear_error()
  end subroutine tidal_from_c

  !> True when ctx holds a context; otherwise records INVALID_ARGUMENT naming `procedure`.
  logical function tidal_has_context(ctx, procedure, status) result(ok)
    type(tidal_ctx), intent(in) :: ctx
    character(len=*), intent(in) :: procedure
    integer, intent(out) :: status
    ok = c_associated(ctx%handle)
    status = TIDAL_OK
    if (.not. ok) call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, procedure // &
         ': the context is not initialised (call tidal_init first, and check its status)')
  end function tidal_has_context

  ! Strings come back through subroutines with an allocatable intent(out) argument, never
  ! through functions returning character(len=:), allocatable: for every call of such a
  ! function gfortran (12 at least) keeps the result's length in a *static* temporary in the
  ! caller, so two threads calling one at once corrupt the heap. The public functions of
  ! module tidal that must return such strings are thin shells over these subroutines, and
  ! tests/fortran/check_static_strings.py keeps the library free of those temporaries.

  !> The message of this thread's newest failure: the binding's own when it has one, else the
  !! C library's.
  subroutine tidal_pending_error(text)
    character(len=:), allocatable, intent(out) :: text
    type(c_ptr) :: own
    own = c_pending_error()
    if (c_associated(own)) then
       call tidal_f_string(own, text)
    else
       call tidal_f_string(tidal_last_error(), text)
    end if
  end subroutine tidal_pending_error

  !> A Fortran string as a NUL-terminated C character array.
  pure function tidal_c_string(text) result(chars)
    character(len=*), intent(in) :: text
    character(kind=c_char) :: chars(len(text) + 1)
    integer :: i
    do i = 1, len(text)
       chars(i) = text(i:i)
    end do
    chars(len(text) + 1) = c_null_char
  end function tidal_c_string

  !> A NUL-terminated C string (`const char *`) as a Fortran string; "" for NULL.
  subroutine tidal_f_string(pointer, text)
    type(c_ptr), intent(in) :: pointer
    character(len=:), allocatable, intent(out) :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: length
    length = 0
    if (c_associated(pointer)) length = int(c_strlen(pointer))
    call c_f_pointer(pointer, chars, [length])
    call tidal_f_chars(chars, text)
  end subroutine tidal_f_string

  !> A C char[N] field (NUL-terminated, or full) as a Fortran string.
  pure subroutine tidal_f_chars(chars, text)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable, intent(out) :: text
    integer :: length, i
    length = size(chars)
    do i = 1, size(chars)
       if (chars(i) == c_null_char) then
          length = i - 1
          exit
       end if
    end do
    allocate(character(len=length) :: text)
    do i = 1, length
       text(i:i) = chars(i)
    end do
  end subroutine tidal_f_chars

  !> Allocates product(shape) * element_bytes bytes through tidal_alloc. The generated
  !! tidal_allocate procedures check nothing themselves; every check and message lives here.
  subroutine tidal_allocate_bytes(ctx, shape, rank, element_bytes, base, status, kind, tag, &
                                  hints, device)
    type(tidal_ctx), intent(in) :: ctx
    integer(int64), intent(in) :: shape(:)
    integer, intent(in) :: rank
    integer(c_size_t), intent(in) :: element_bytes
    type(c_ptr), intent(out) :: base
    integer, intent(out) :: status
    integer, intent(in), optional :: kind
    character(len=*), intent(in), optional :: tag
    integer, intent(in), optional :: hints
    integer, intent(in), optional :: device
    type(tidal_alloc_desc) :: desc
    character(kind=c_char), allocatable, target :: c_tag(:)
    integer(c_size_t) :: bytes
    character(len=24) :: a, b
    integer :: i

    base = c_null_ptr
    if (.not. tidal_has_context(ctx, 'tidal_allocate', status)) return
    if (size(shape) /= rank) then
       write (a, '(i0)') size(shape)
       write (b, '(i0)') rank
       call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_allocate: shape has ' // &
            trim(a) // ' extents for an array of rank ' // trim(b))
       return
    end if
    bytes = element_bytes
    do i = 1, rank
       if (shape(i) < 0) then
          write (a, '(i0)') i
          write (b, '(i0)') shape(i)
          call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_allocate: extent ' // &
               trim(a) // ' of shape is negative (' // trim(b) // ')')
          return
       end if
       ! A product past 2**63 bytes can never be allocated: the C library's status for sizes
       ! that can never fit is OUT_OF_MEMORY, and the binding says the same.
       ! Nested, not `.and.`: Fortran may evaluate both operands, and a zero extent would
       ! then divide by zero (SIGFPE in an unoptimised build).
       if (shape(i) > 0) then
          if (bytes > huge(bytes) / shape(i)) then
             call tidal_fail(status, TIDAL_ERROR_OUT_OF_MEMORY, &
                  'tidal_allocate: the shape needs more than 2**63 bytes, which no device has')
             return
          end if
       end if
       bytes = bytes * shape(i)
    end do
    ! A zero extent leaves bytes = 0: tidal_alloc answers INVALID_ARGUMENT with its own
    ! message, so the binding does not second-guess it.

    desc%struct_size = c_sizeof(desc)
    if (present(kind)) desc%kind = int(kind, c_int)
    if (present(device)) desc%device = int(device, c_int32_t)
    if (present(hints)) desc%hints = int(hints, c_int32_t)
    if (present(tag)) then
       ! Trailing blanks are padding in Fortran, not part of a name.
       c_tag = tidal_c_string(trim(tag))
       desc%tag = c_loc(c_tag)
    end if
    call tidal_from_c(tidal_alloc(ctx%handle, bytes, desc, base), status)
  end subroutine tidal_allocate_bytes

  !> Frees the allocation `array` is: the whole of it, contiguous, from its first byte. A
  !! section is refused with nothing freed, whether it starts at the allocation's base (here)
  !! or inside it (tidal_free's interior-pointer error): freeing the whole through a part
  !! would leave the pointer that holds the whole dangling. The generated tidal_deallocate
  !! procedures check association first, pass is_contiguous(array), and nullify after success.
  subroutine tidal_deallocate_array(ctx, array, contiguous, status)
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    logical, intent(in) :: contiguous
    integer, intent(out) :: status
    type(tidal_pointer_info) :: owner
    type(c_ptr) :: lowest
    integer(c_size_t) :: bytes
    character(len=24) :: covered, whole
    character(len=20) :: gaps
    if (.not. tidal_has_context(ctx, 'tidal_deallocate', status)) return
    call tidal_array_span(array, lowest, bytes)
    if (bytes == 0) then
       call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, &
            'tidal_deallocate: the array has no elements, so it cannot be memory tidal allocated')
       return
    end if
    ! Memory tidal does not know, or a section inside an allocation: tidal_free says which.
    if (starts_allocation(ctx, lowest, owner)) then
       if (owner%size /= bytes .or. .not. contiguous) then
          write (covered, '(i0)') bytes
          write (whole, '(i0)') owner%size
          gaps = ''
          if (.not. contiguous) gaps = ', not contiguously'
          call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_deallocate: the array is ' // &
               'a section of its allocation (it spans ' // trim(covered) // ' of its ' // &
               trim(whole) // ' bytes' // trim(gaps) // '); deallocate the whole array ' // &
               'tidal_allocate gave; nothing was freed')
          return
       end if
    end if
    call tidal_from_c(tidal_free(ctx%handle, lowest), status)
  end subroutine tidal_deallocate_array

  !> True when `array` (associated) starts a live allocation of `ctx`: tidal_allocate refuses
  !! to point it elsewhere, as Fortran's allocate refuses an allocated array, since that
  !! allocation could otherwise be lost; `status` is then INVALID_ARGUMENT with a message.
  !! Anything else it may be associated with (memory Fortran or another context allocated,
  !! a section inside an allocation, memory already freed) is just let go, as Fortran's own
  !! allocate does with a pointer. False, with status TIDAL_OK, otherwise.
  logical function tidal_holds_allocation(ctx, array, status) result(holds)
    type(tidal_ctx), intent(in) :: ctx
    type(*), dimension(..), intent(in) :: array
    integer, intent(out) :: status
    type(tidal_pointer_info) :: owner
    type(c_ptr) :: lowest
    integer(c_size_t) :: bytes
    character(len=24) :: size
    status = TIDAL_OK
    holds = .false.
    if (.not. c_associated(ctx%handle)) return ! tidal_allocate_bytes reports it
    call tidal_array_span(array, lowest, bytes)
    if (bytes == 0) return
    holds = starts_allocation(ctx, lowest, owner)
    if (.not. holds) return
    write (size, '(i0)') owner%size
    call tidal_fail(status, TIDAL_ERROR_INVALID_ARGUMENT, 'tidal_allocate: the array pointer ' // &
         'is still associated with a live tidal allocation (' // trim(size) // ' bytes); ' // &
         'tidal_deallocate it first, or nullify it if another pointer keeps that allocation')
  end function tidal_holds_allocation

  ! True when `lowest` is the first byte of a live allocation of ctx, which `owner` describes.
  ! The query is the binding's own question, not a call of the caller's: when it fails, the
  ! message of the caller's newest failure is put back, so that a tidal_allocate that goes on
  ! to succeed leaves tidal_last_error_message() as it was.
  logical function starts_allocation(ctx, lowest, owner) result(starts)
    type(tidal_ctx), intent(in) :: ctx
    type(c_ptr), intent(in) :: lowest
    type(tidal_pointer_info), intent(out) :: owner
    character(len=:), allocatable :: newest
    integer :: ignored
    call tidal_pending_error(newest)
    owner%struct_size = c_sizeof(owner)
    starts = tidal_pointer_query(ctx%handle, lowest, owner) == TIDAL_OK
    if (.not. starts) call tidal_fail(ignored, TIDAL_OK, newest)
    if (starts) starts = c_associated(owner%base, lowest)
  end function starts_allocation
end module tidal_base

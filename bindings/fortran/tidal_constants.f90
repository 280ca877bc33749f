! tidal — named constants of the C ABI (api/tidal/tidal.h), for Fortran.
!
! The first of three layers (netcdf-fortran style): this module holds only constants, tidal_c
! the raw bind(C) interfaces, and tidal the module applications use. Every value here is a
! copy of a number in tidal.h; tests/fortran/test_abi_layout checks each against the header
! through a C helper, and check_mirror.py fails when the header gains a name missing here, so
! the two cannot drift apart unnoticed. Numbers are only ever appended, as in the header.
!
! Enumerations (C `int`) are integer(c_int); bit masks (C uint32_t) are integer(c_int32_t),
! which is the same kind as default integer on every compiler tidal supports, so they combine
! with ior() and pass to the default-integer arguments of module tidal.
module tidal_constants
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t
  implicit none
  private :: c_int, c_int32_t

  ! ---- Version --------------------------------------------------------------------------
  integer(c_int), parameter :: TIDAL_VERSION_MAJOR = 0
  integer(c_int), parameter :: TIDAL_VERSION_MINOR = 1
  integer(c_int), parameter :: TIDAL_VERSION_PATCH = 0
  integer(c_int), parameter :: TIDAL_VERSION_NUMBER = &
       TIDAL_VERSION_MAJOR * 10000 + TIDAL_VERSION_MINOR * 100 + TIDAL_VERSION_PATCH
  character(len=*), parameter :: TIDAL_VERSION_STRING = '0.1.0'
  integer(c_int), parameter :: TIDAL_ABI_VERSION = 1

  ! ---- Status (enum tidal_status) -------------------------------------------------------
  integer(c_int), parameter :: TIDAL_OK = 0
  integer(c_int), parameter :: TIDAL_ERROR_INVALID_ARGUMENT = 1 ! bad value, size 0, bad flag
  integer(c_int), parameter :: TIDAL_ERROR_OUT_OF_MEMORY = 2
  integer(c_int), parameter :: TIDAL_ERROR_NOT_SUPPORTED = 3
  integer(c_int), parameter :: TIDAL_ERROR_NO_DEVICE = 4
  integer(c_int), parameter :: TIDAL_ERROR_UNKNOWN_POINTER = 5  ! not from tidal, or freed
  integer(c_int), parameter :: TIDAL_ERROR_CONFIG = 6
  integer(c_int), parameter :: TIDAL_ERROR_PLUGIN = 7
  integer(c_int), parameter :: TIDAL_ERROR_RUNTIME = 8
  integer(c_int), parameter :: TIDAL_ERROR_BUDGET_EXCEEDED = 9
  integer(c_int), parameter :: TIDAL_ERROR_ILLEGAL_ACCESS = 10
  integer(c_int), parameter :: TIDAL_ERROR_INTERNAL = 11
  integer(c_int), parameter :: TIDAL_ERROR_NOT_FOUND = 12
  integer(c_int), parameter :: TIDAL_ERROR_BUFFER_TOO_SMALL = 13

  ! ---- Allocation kinds (enum tidal_kind) -----------------------------------------------
  integer(c_int), parameter :: TIDAL_KIND_AUTO = 0
  integer(c_int), parameter :: TIDAL_KIND_DEVICE = 1
  integer(c_int), parameter :: TIDAL_KIND_MANAGED = 2
  integer(c_int), parameter :: TIDAL_KIND_PINNED = 3
  integer(c_int), parameter :: TIDAL_KIND_PAGEABLE = 4
  integer(c_int), parameter :: TIDAL_KIND_DEVICE_FINE = 5
  integer(c_int), parameter :: TIDAL_KIND_MANAGED_COARSE = 6
  integer(c_int), parameter :: TIDAL_KIND_ELASTIC = 7
  integer(c_int), parameter :: TIDAL_KIND_COUNT = 8

  ! ---- Usage hints (TIDAL_HINT_*) -------------------------------------------------------
  integer(c_int32_t), parameter :: TIDAL_HINT_READ_MOSTLY = int(z'01', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_HINT_HOST_READ = int(z'02', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_HINT_HOST_WRITE = int(z'04', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_HINT_DEVICE_ONLY = int(z'08', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_HINT_STREAMING = int(z'10', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_HINT_TEMPORARY = int(z'20', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_HINT_ALL = int(z'3F', c_int32_t)

  ! ---- Advice on managed memory (TIDAL_ADVICE_*) ----------------------------------------
  integer(c_int32_t), parameter :: TIDAL_ADVICE_READ_MOSTLY = int(z'01', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ADVICE_PREFERRED_DEVICE = int(z'02', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ADVICE_PREFERRED_HOST = int(z'04', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ADVICE_ACCESSED_BY_DEVICE = int(z'08', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ADVICE_COARSE_GRAIN = int(z'10', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ADVICE_ALL = int(z'1F', c_int32_t)

  ! ---- Device selectors and locations ---------------------------------------------------
  integer(c_int32_t), parameter :: TIDAL_DEVICE_DEFAULT = -1 ! let the policy chain choose
  integer(c_int32_t), parameter :: TIDAL_DEVICE_HOST = -2    ! host; no device affinity
  integer(c_int32_t), parameter :: TIDAL_LOCATION_NONE = -3  ! no location recorded

  ! Bytes in a tag, the terminating NUL included: a Fortran tag may have TIDAL_TAG_MAX - 1
  ! characters after trailing blanks are removed.
  integer(c_int), parameter :: TIDAL_TAG_MAX = 64

  ! ---- Managed-range coherency (enum tidal_coherency) -----------------------------------
  integer(c_int), parameter :: TIDAL_COHERENCY_UNKNOWN = 0
  integer(c_int), parameter :: TIDAL_COHERENCY_FINE = 1
  integer(c_int), parameter :: TIDAL_COHERENCY_COARSE = 2
  integer(c_int), parameter :: TIDAL_COHERENCY_INDETERMINATE = 3

  ! ---- Validation kernels (enum tidal_check_kind) ---------------------------------------
  integer(c_int), parameter :: TIDAL_CHECK_TOUCH_READ = 1
  integer(c_int), parameter :: TIDAL_CHECK_TOUCH_WRITE = 2
  integer(c_int), parameter :: TIDAL_CHECK_PATTERN_FILL = 3
  integer(c_int), parameter :: TIDAL_CHECK_PATTERN_VERIFY = 4
  integer(c_int), parameter :: TIDAL_CHECK_COPY = 5
  integer(c_int), parameter :: TIDAL_CHECK_TRIAD = 6
  integer(c_int), parameter :: TIDAL_CHECK_ATOMIC_ADD = 7
  integer(c_int), parameter :: TIDAL_CHECK_RUNTIME_COPY = 8
  integer(c_int), parameter :: TIDAL_CHECK_SPIN = 9
  integer(c_int), parameter :: TIDAL_CHECK_ATOMIC_SET = 10
  integer(c_int), parameter :: TIDAL_CHECK_ATOMIC_SET_SHARED = 11
  ! The atomic set's operations (result bits of TIDAL_CHECK_ATOMIC_SET)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_AND32 = int(z'1', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_OR32 = int(z'2', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_XOR32 = int(z'4', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_ADD32 = int(z'8', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_SUB32 = int(z'10', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_MIN32 = int(z'20', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_MAX32 = int(z'40', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_EXCH32 = int(z'80', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_CAS32 = int(z'100', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_AND64 = int(z'200', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_OR64 = int(z'400', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_XOR64 = int(z'800', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_ADD64 = int(z'1000', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_SUB64 = int(z'2000', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_MIN64 = int(z'4000', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_MAX64 = int(z'8000', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_EXCH64 = int(z'10000', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_CAS64 = int(z'20000', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_FADD32 = int(z'40000', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_ALL = int(z'7FFFF', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ATOMIC_SET_BYTES = 304

  ! ---- XNACK state (enum tidal_xnack) ---------------------------------------------------
  integer(c_int), parameter :: TIDAL_XNACK_NOT_APPLICABLE = 0
  integer(c_int), parameter :: TIDAL_XNACK_ON = 1
  integer(c_int), parameter :: TIDAL_XNACK_OFF = 2
  integer(c_int), parameter :: TIDAL_XNACK_UNKNOWN = 3

  ! ---- Link between two devices (enum tidal_link_type) ---------------------------------
  integer(c_int), parameter :: TIDAL_LINK_UNKNOWN = 0
  integer(c_int), parameter :: TIDAL_LINK_SAME = 1
  integer(c_int), parameter :: TIDAL_LINK_PCIE = 2
  integer(c_int), parameter :: TIDAL_LINK_XGMI = 3
  integer(c_int), parameter :: TIDAL_LINK_NVLINK = 4
  integer(c_int), parameter :: TIDAL_LINK_NONE = 5

  ! ---- Device capability flags (TIDAL_DEVICE_FLAG_*) ------------------------------------
  integer(c_int32_t), parameter :: TIDAL_DEVICE_FLAG_SIMULATED = int(z'01', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_DEVICE_FLAG_MANAGED = int(z'02', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED = int(z'04', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS = int(z'08', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT = int(z'10', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS = int(z'20', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_DEVICE_FLAG_FINE_GRAINED = int(z'40', c_int32_t)

  ! ---- Access declarations (TIDAL_ACCESS_*, tidal_access%mode) --------------------------
  integer(c_int32_t), parameter :: TIDAL_ACCESS_READ = int(z'01', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ACCESS_WRITE = int(z'02', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_ACCESS_READ_WRITE = int(z'03', c_int32_t)

  ! ---- tidal_declare flags (TIDAL_DECLARE_*) ---------------------------------------------
  ! LOOKAHEAD: the ranges are for the stream's NEXT phase (start moving now, order nothing).
  integer(c_int32_t), parameter :: TIDAL_DECLARE_LOOKAHEAD = int(z'01', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_DECLARE_FLAGS_ALL = int(z'01', c_int32_t)

  ! ---- tidal_offload / tidal_restore flags (TIDAL_OFFLOAD_*, TIDAL_RESTORE_*) -------------
  integer(c_int32_t), parameter :: TIDAL_OFFLOAD_DISCARD = int(z'01', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_OFFLOAD_KEEP_PHYSICAL = int(z'02', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_OFFLOAD_FLAGS_ALL = int(z'03', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_RESTORE_READ_ONLY = int(z'01', c_int32_t)
  integer(c_int32_t), parameter :: TIDAL_RESTORE_FLAGS_ALL = int(z'01', c_int32_t)
end module tidal_constants

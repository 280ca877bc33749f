/* The detailed message of a failure found by module tidal itself (a bad shape, an
 * unassociated pointer, a missing context) rather than by the C library.
 *
 * tidal_last_error() keeps the C library's message per thread; the binding's own checks need
 * the same guarantee, because Fortran codes call tidal from OpenMP threads and a Fortran
 * module variable is shared between them. Module tidal clears it whenever a C call fails
 * (the C library then holds the newer message), so a message pending here is always newer
 * than the C library's. Hidden from the exports: not part of tidal's ABI. */
#include <stddef.h>
#include <string.h>

#define TIDAL_FORTRAN_MESSAGE_MAX 512

static _Thread_local char t_message[TIDAL_FORTRAN_MESSAGE_MAX];
static _Thread_local int t_pending;

__attribute__((visibility("hidden"))) void tidal_fortran_set_error(const char *message,
                                                                   size_t length)
{
    if (length >= sizeof t_message)
        length = sizeof t_message - 1;
    memcpy(t_message, message, length);
    t_message[length] = '\0';
    t_pending = 1;
}

__attribute__((visibility("hidden"))) void tidal_fortran_clear_error(void)
{
    t_pending = 0;
}

/* NULL when the last failure on this thread (if any) was the C library's. */
__attribute__((visibility("hidden"))) const char *tidal_fortran_pending_error(void)
{
    return t_pending ? t_message : NULL;
}

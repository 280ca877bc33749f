/* The memory an array argument covers, read from its Fortran descriptor.
 *
 * Module tidal passes arrays of any type and rank (`type(*), dimension(..)`) to prefetch and
 * query. Standard Fortran cannot take the address of an element of an assumed-type array,
 * and an array section may be strided or reversed, so the address tidal needs (the lowest
 * byte) and the span up to the highest byte come from the C descriptor (ISO_Fortran_binding.h,
 * the header of the Fortran compiler that builds module tidal). Not part of tidal's ABI:
 * hidden from the library's exports. */
#include <ISO_Fortran_binding.h>
#include <stddef.h>
#include <stdint.h>

__attribute__((visibility("hidden"))) void tidal_fortran_array_span(const CFI_cdesc_t *array,
                                                                    void **lowest,
                                                                    size_t *bytes)
{
    *lowest = NULL;
    *bytes = 0;
    if (array == NULL || array->base_addr == NULL)
        return;
    /* Byte offsets of the lowest and highest element relative to the first one: a negative
     * stride moves the lowest element below base_addr. */
    ptrdiff_t low = 0;
    ptrdiff_t high = 0;
    for (CFI_rank_t d = 0; d < array->rank; ++d) {
        const CFI_index_t extent = array->dim[d].extent;
        if (extent <= 0)
            return; /* no elements: nothing to name */
        const ptrdiff_t reach = (ptrdiff_t)array->dim[d].sm * (ptrdiff_t)(extent - 1);
        if (reach < 0)
            low += reach;
        else
            high += reach;
    }
    *lowest = (char *)array->base_addr + low;
    *bytes = (size_t)(high - low) + array->elem_len;
}

/* LD_PRELOAD stand-in for a CUDA driver without the virtual-memory API: the runtime's
 * cudaGetDriverEntryPointByVersion finds no cuMem* symbol (the rest it never serves, and the
 * CUDA module asks it for nothing else). With it, test_vmm expects every vmm op to answer
 * cudaErrorNotSupported, with a name that says why. */
#include <stddef.h>
#include <string.h>

int cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version, unsigned long long flags,
                                     int *found)
{
    (void)version;
    (void)flags;
    if (fn)
        *fn = NULL;
    if (found)
        *found = 1; /* cudaDriverEntryPointSymbolNotFound */
    return strncmp(symbol, "cuMem", 5) == 0 ? 0 : 500; /* 500: cudaErrorSymbolNotFound */
}

/* The address-derived test pattern every runtime's pattern kernels agree on: word `i` of a
 * range filled with seed `s` holds tidal_pattern_word(s, i). Plain C so the simulated
 * device, the HIP and the CUDA kernels and the tests share one definition. */
#ifndef TIDAL_KERNELS_PATTERN_H
#define TIDAL_KERNELS_PATTERN_H
#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#  define TIDAL_PATTERN_FN __host__ __device__ static inline
#else
#  define TIDAL_PATTERN_FN static inline
#endif

/* splitmix64 of the seed mixed with the word index: cheap, and any swapped, shifted or
 * stale page shows up as a mismatch. */
TIDAL_PATTERN_FN uint64_t tidal_pattern_word(uint64_t seed, uint64_t index)
{
    uint64_t z = seed + (index + 1u) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
#endif

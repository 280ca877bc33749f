/* A runtime module that exports no tidal_runtime_negotiate (only a misnamed entry point):
 * the core must refuse it with TIDAL_ERROR_RUNTIME naming the missing symbol. */
#include <stdint.h>

#include "runtime/runtime_contract.h"

__attribute__((visibility("default"))) int tidal_runtime_entry(uint32_t core_abi,
                                                               uint32_t *chosen_abi,
                                                               const tidal_rt_ops **ops);

__attribute__((visibility("default"))) int tidal_runtime_entry(uint32_t core_abi,
                                                               uint32_t *chosen_abi,
                                                               const tidal_rt_ops **ops)
{
    (void)core_abi;
    (void)chosen_abi;
    (void)ops;
    return 1;
}

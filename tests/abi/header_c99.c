/*
 * The public headers as a C99 compiler with -pedantic -Werror sees them: no C11 features,
 * no extensions, no warnings. Built and run as a test: it also links libtidal.so and checks
 * the layout rules the headers promise (struct_size first, *_INIT macros that initialise).
 */
#include "tidal/policy.h" /* first: it must stand alone (it includes tidal.h itself) */
#include "tidal/tidal.h"
#include "tidal/policy.h" /* twice: the include guards hold */

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* C99 has no static_assert: a negative array size fails the build. */
#define CHECK_AT_BUILD(name, condition) typedef char check_##name[(condition) ? 1 : -1]

CHECK_AT_BUILD(alloc_desc_size_first, offsetof(tidal_alloc_desc, struct_size) == 0);
CHECK_AT_BUILD(pointer_info_size_first, offsetof(tidal_pointer_info, struct_size) == 0);
CHECK_AT_BUILD(system_info_size_first, offsetof(tidal_system_info, struct_size) == 0);
CHECK_AT_BUILD(device_info_size_first, offsetof(tidal_device_info, struct_size) == 0);
CHECK_AT_BUILD(hooks_size_first, offsetof(tidal_policy_hooks, struct_size) == 0);
CHECK_AT_BUILD(options_api_size_first, offsetof(tidal_options_api, struct_size) == 0);
CHECK_AT_BUILD(place_request_size_first, offsetof(tidal_place_request, struct_size) == 0);
CHECK_AT_BUILD(placement_size_first, offsetof(tidal_placement, struct_size) == 0);
CHECK_AT_BUILD(error_event_size_first, offsetof(tidal_error_event, struct_size) == 0);
CHECK_AT_BUILD(recovery_size_first, offsetof(tidal_recovery, struct_size) == 0);
CHECK_AT_BUILD(init_args_size_first, offsetof(tidal_policy_init_args, struct_size) == 0);
CHECK_AT_BUILD(policy_system_size_first, offsetof(tidal_policy_system, struct_size) == 0);
CHECK_AT_BUILD(policy_device_size_first, offsetof(tidal_policy_device, struct_size) == 0);

/* Status and enum numbers are part of the ABI: they never change. */
CHECK_AT_BUILD(status_ok, TIDAL_OK == 0);
CHECK_AT_BUILD(status_oom, TIDAL_ERROR_OUT_OF_MEMORY == 2);
CHECK_AT_BUILD(status_last, TIDAL_ERROR_BUFFER_TOO_SMALL == 13);
CHECK_AT_BUILD(kind_count, TIDAL_KIND_COUNT == TIDAL_KIND_ELASTIC + 1);
CHECK_AT_BUILD(hints_all, TIDAL_HINT_ALL == 0x3Fu);
CHECK_AT_BUILD(advice_all, TIDAL_ADVICE_ALL == 0x1Fu);
CHECK_AT_BUILD(tag_fits, sizeof(((tidal_pointer_info *)0)->tag) == TIDAL_TAG_MAX);

/* The kind predicates: constant expressions, true for exactly these kinds. */
CHECK_AT_BUILD(kind_host, TIDAL_KIND_IS_HOST(TIDAL_KIND_PINNED) && TIDAL_KIND_IS_HOST(TIDAL_KIND_PAGEABLE) &&
                              !TIDAL_KIND_IS_HOST(TIDAL_KIND_AUTO) && !TIDAL_KIND_IS_HOST(TIDAL_KIND_DEVICE) &&
                              !TIDAL_KIND_IS_HOST(TIDAL_KIND_MANAGED) && !TIDAL_KIND_IS_HOST(TIDAL_KIND_DEVICE_FINE) &&
                              !TIDAL_KIND_IS_HOST(TIDAL_KIND_MANAGED_COARSE));
CHECK_AT_BUILD(kind_managed, TIDAL_KIND_IS_MANAGED(TIDAL_KIND_MANAGED) &&
                                 TIDAL_KIND_IS_MANAGED(TIDAL_KIND_MANAGED_COARSE) &&
                                 !TIDAL_KIND_IS_MANAGED(TIDAL_KIND_AUTO) && !TIDAL_KIND_IS_MANAGED(TIDAL_KIND_DEVICE) &&
                                 !TIDAL_KIND_IS_MANAGED(TIDAL_KIND_PINNED) &&
                                 !TIDAL_KIND_IS_MANAGED(TIDAL_KIND_PAGEABLE) &&
                                 !TIDAL_KIND_IS_MANAGED(TIDAL_KIND_DEVICE_FINE));

/* TIDAL_COVERS is a C99 constant expression, and a field counts only when all of it is there. */
CHECK_AT_BUILD(covers_whole, TIDAL_COVERS(sizeof(tidal_placement), tidal_placement, reason));
CHECK_AT_BUILD(covers_not_before, !TIDAL_COVERS(offsetof(tidal_placement, reason), tidal_placement, reason));
CHECK_AT_BUILD(covers_not_partly, !TIDAL_COVERS(offsetof(tidal_policy_hooks, evict) + sizeof(void *) - 1,
                                                tidal_policy_hooks, evict));

/* A plugin's entry point has exactly the negotiation type. */
static tidal_status negotiate(uint32_t core_abi, uint32_t *chosen_abi, tidal_policy_hooks *hooks)
{
    (void)core_abi;
    (void)chosen_abi;
    (void)hooks;
    return TIDAL_ERROR_NOT_SUPPORTED;
}

int main(void)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    tidal_system_info system = TIDAL_SYSTEM_INFO_INIT;
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    tidal_policy_negotiate_fn entry = negotiate;
    int failures = 0;

    if (desc.struct_size != sizeof desc || desc.kind != TIDAL_KIND_AUTO ||
        desc.device != TIDAL_DEVICE_DEFAULT || desc.alignment != 0 || desc.tag != NULL ||
        desc.hints != 0) {
        fprintf(stderr, "TIDAL_ALLOC_DESC_INIT does not initialise every field as documented\n");
        ++failures;
    }
    if (info.struct_size != sizeof info || info.tag[0] != '\0' || info.placed_by[0] != '\0') {
        fprintf(stderr, "TIDAL_POINTER_INFO_INIT is wrong\n");
        ++failures;
    }
    if (system.struct_size != sizeof system || device.struct_size != sizeof device ||
        device.numa_node != -1) {
        fprintf(stderr, "TIDAL_SYSTEM_INFO_INIT or TIDAL_DEVICE_INFO_INIT is wrong\n");
        ++failures;
    }
    if (entry(TIDAL_POLICY_ABI_VERSION, NULL, NULL) != TIDAL_ERROR_NOT_SUPPORTED)
        ++failures;
    {
        /* At run time too, with a size only known then (a struct the other side handed over). */
        volatile size_t old_size = offsetof(tidal_policy_hooks, plan_prefetch);
        if (TIDAL_COVERS(old_size, tidal_policy_hooks, plan_prefetch) ||
            !TIDAL_COVERS(old_size, tidal_policy_hooks, recover)) {
            fprintf(stderr, "TIDAL_COVERS misjudges a struct_size known at run time\n");
            ++failures;
        }
    }
    if (strcmp(TIDAL_POLICY_ENTRY_SYMBOL, "tidal_policy_negotiate") != 0) {
        fprintf(stderr, "TIDAL_POLICY_ENTRY_SYMBOL is \"%s\"\n", TIDAL_POLICY_ENTRY_SYMBOL);
        ++failures;
    }
    /* Linked from C99: the library answers with the version this header names. */
    if (tidal_version_number() != TIDAL_VERSION_NUMBER ||
        strcmp(tidal_version_string(), TIDAL_VERSION_STRING) != 0) {
        fprintf(stderr, "library version %u \"%s\", header %d \"%s\"\n", tidal_version_number(),
                tidal_version_string(), TIDAL_VERSION_NUMBER, TIDAL_VERSION_STRING);
        ++failures;
    }
    return failures == 0 ? 0 : 1;
}

// Decides whether an AMD GPU migrates managed pages on a device page fault (XNACK), from the
// three signals that actually track it. Pure: no HIP header, so it is unit-tested without a
// GPU or a HIP SDK (tests/unit/test_hip_xnack.cpp).
//
// Signals (hip-memory-facts.md, "XNACK and what managed memory really does"):
//  - gcnArchName's target feature `:xnack+` / `:xnack-` (e.g. "gfx90a:sramecc+:xnack+"): ROCr's
//    per-device, per-process truth, already reflecting HSA_XNACK where the GPU can switch.
//  - hipDeviceAttributePageableMemoryAccess: 1 only when EVERY GPU has XNACK on (system-wide).
//  - HSA_XNACK (1/0): what the process asked for; only a tie-breaker, since gfx906/gfx908
//    ignore it and the arch suffix already shows what the runtime granted.
// Never consulted: hipDeviceAttributeManagedMemory / ConcurrentManagedAccess — they read 1
// with XNACK off on AMD.
//
// Decision (the dangerous mistake is "on" when it is off: a policy would then hand pageable
// memory to kernels, which faults; so disagreement yields UNKNOWN, never ON):
//
//   arch suffix | pageableMemoryAccess | HSA_XNACK | verdict
//   ------------+----------------------+-----------+----------------------------------------
//   xnack+      | 1 or unreadable      | any       | ON
//   xnack+      | 0                    | any       | UNKNOWN (another GPU has XNACK off, or
//               |                      |           |   no HMM: pageable memory not mapped)
//   xnack-      | any                  | any       | OFF (the device cannot retry faults)
//   none        | 1                    | any       | ON  (the runtime vouches system-wide)
//   none        | 0                    | any       | OFF (gfx1030 & co have no XNACK at all)
//   none        | unreadable           | "0"       | OFF (the process turned it off)
//   none        | unreadable           | "1"/unset | UNKNOWN (nothing confirms it)
//
// gfx906/gfx908 report ":xnack-" explicitly (they cannot turn XNACK on), so they land in the
// xnack- row whatever HSA_XNACK says; the reason then names the ignored request.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tidal/tidal.h"

namespace tidal::hip {

// Numbered as tidal_xnack so the verdict goes straight into tidal_rt_device_props.xnack.
enum class XnackState : int32_t {
    on = TIDAL_XNACK_ON,
    off = TIDAL_XNACK_OFF,
    unknown = TIDAL_XNACK_UNKNOWN,
};

struct XnackVerdict {
    XnackState state = XnackState::unknown;
    std::string reason; // one clause for logs: which signals decided, with their values
};

// What the `xnack` target feature of a gcnArchName says.
enum class ArchXnack { plus, minus, absent };

// Looks for a feature token exactly "xnack+" or "xnack-" after the processor name.
ArchXnack arch_xnack_feature(std::string_view gcn_arch) noexcept;

// `pageable_memory_access`: the attribute's value (0/1), or any negative number when it could
// not be read. `hsa_xnack_env`: getenv("HSA_XNACK"), nullptr when unset.
XnackVerdict classify_xnack(std::string_view gcn_arch, int pageable_memory_access,
                            const char *hsa_xnack_env);

} // namespace tidal::hip

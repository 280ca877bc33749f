// The configured policies in order, then the core defaults. Asks each in turn, lets "defer"
// pass the question on, and validates every answer before the core acts on it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/settings.h"
#include "policy/policy_plugin.h"
#include "registry/allocation_record.h"

namespace tidal {

// What the chain planned for one declared or prefetched managed range: the fields of a
// tidal_prefetch_plan the core acts on (its 128-byte reason only goes into error messages).
struct PrefetchDecision {
    int32_t action = TIDAL_PREFETCH_MIGRATE;
    uint64_t chunk_size = 0; // bytes per runtime call; 0 = the configured chunk size
    uint32_t advice_set = 0;
    const char *planned_by = ""; // instance name or "core"
};

struct Decision {
    tidal_placement placement{};
    const char *placed_by = kPlacedByNone; // the policy's instance name (owned by the chain), or "core": kPlacedByBytes, NUL-padded
};

class PolicyChain {
public:
    // Loads settings.policies in order. `system` must outlive the chain.
    PolicyChain(const Settings &settings, const tidal_policy_system *system);

    // The validated placement for a request. Throws TIDAL_ERROR_PLUGIN for a malformed answer
    // or a refusal, TIDAL_ERROR_NOT_SUPPORTED when the device cannot do what was decided.
    // `split`, when given, gets the decider's split over devices (tidal_placement.parts),
    // validated; a decision with a split is never CACHEABLE. Without `split` one is refused.
    Decision place(const tidal_place_request &request, std::vector<tidal_policy_part> *split = nullptr) const;
    // A validated retry placement, or nullopt when the chain says to fail.
    std::optional<Decision> recover(const tidal_error_event &event) const;
    // A validated prefetch plan; the core's default migrates with the configured chunk size.
    PrefetchDecision plan_prefetch(const tidal_prefetch_request &request) const;
    // Whether any policy answers plan_prefetch. When none does, every plan is the core's
    // default, and a caller with many ranges need not build a request for each.
    bool plans_prefetch() const noexcept { return plans_prefetch_; }
    static PrefetchDecision core_prefetch() noexcept;
    // Candidate indices in eviction order, validated (in range, each at most once). The core's
    // default is least recently used first. `who` gets the deciding policy's name.
    std::vector<size_t> evict(const tidal_evict_request &request, const char **who) const;

    const std::vector<std::unique_ptr<PolicyPlugin>> &plugins() const noexcept { return plugins_; }
    static std::vector<std::filesystem::path> search_path(const Settings &settings, const std::string &name);

private:
    // `plugin`: the deciding plugin's name, or nullptr for the core defaults (the request).
    void validate(const tidal_placement &p, const char *plugin) const;
    // The split of a DECIDED placement of `size` bytes, checked (see tidal_placement.parts).
    std::vector<tidal_policy_part> read_split(const tidal_placement &p, size_t size, const char *plugin) const;
    static std::filesystem::path locate(const Settings &settings, const std::string &name, size_t index);

    const tidal_policy_system *system_;
    std::vector<std::unique_ptr<PolicyPlugin>> plugins_;
    bool plans_prefetch_ = false;
};

} // namespace tidal

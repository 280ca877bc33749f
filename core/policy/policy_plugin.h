// One loaded policy plugin: the shared object, the negotiated hook table, the plugin's state
// and its options view. Loading follows the Vulkan loader's negotiation: the core offers its
// highest ABI, the plugin answers; any failure is an error naming the file and the reason.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "plugin/options_view.h"
#include "plugin/shared_library.h"
#include "registry/allocation_record.h"
#include "tidal/policy.h"

namespace tidal {

class PolicyPlugin {
public:
    // Loads `file`, negotiates, checks the options against the plugin's declared keys and calls
    // init. `options` is the [policy.NAME] table or null. Throws TIDAL_ERROR_PLUGIN for a broken
    // plugin, or one another user could replace (SharedLibrary::writable_by_others) unless
    // `allow_writable` ([security] allow_writable_plugins); TIDAL_ERROR_CONFIG for bad options.
    PolicyPlugin(std::string instance_name, const std::filesystem::path &file, const toml::table *options,
                 const std::filesystem::path &config_source, const tidal_policy_system *system,
                 bool allow_writable);
    ~PolicyPlugin();
    PolicyPlugin(const PolicyPlugin &) = delete;
    PolicyPlugin &operator=(const PolicyPlugin &) = delete;

    const std::string &name() const noexcept { return name_; }
    // The name as a record's placed_by: NUL-padded to kPlacedByBytes (longer names cut at 31).
    const char *placed_name() const noexcept { return placed_name_; }
    const std::filesystem::path &file() const noexcept { return library_.path(); }
    const char *description() const noexcept { return hooks_.description ? hooks_.description : ""; }
    uint32_t abi() const noexcept { return abi_; }

    bool can_place() const noexcept { return hooks_.place != nullptr; }
    bool can_recover() const noexcept { return hooks_.recover != nullptr; }
    tidal_policy_verdict place(const tidal_place_request &request, tidal_placement &out) const;
    tidal_policy_verdict recover(const tidal_error_event &event, tidal_recovery &out) const;
    bool can_plan_prefetch() const noexcept { return hooks_.plan_prefetch != nullptr; }
    bool can_evict() const noexcept { return hooks_.evict != nullptr; }
    tidal_policy_verdict plan_prefetch(const tidal_prefetch_request &request, tidal_prefetch_plan &out) const;
    tidal_policy_verdict evict(const tidal_evict_request &request, tidal_evict_plan &out) const;

private:
    void check_option_keys();

    std::string name_;
    char placed_name_[kPlacedByBytes] = {};
    SharedLibrary library_;
    tidal_policy_hooks hooks_{};
    uint32_t abi_ = 0;
    void *state_ = nullptr;
    bool initialised_ = false;
    std::unique_ptr<OptionsView> options_;
};

} // namespace tidal

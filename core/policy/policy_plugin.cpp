#include "policy/policy_plugin.h"

#include "config/toml_include.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "config/key_suggester.h"
#include "status/error.h"

namespace tidal {
namespace {

// Refuses before dlopen: opening runs the object's constructors.
SharedLibrary open_plugin(const std::string &name, const std::filesystem::path &file, bool allow_writable)
{
    if (!allow_writable)
        if (std::string why = SharedLibrary::writable_by_others(file); !why.empty())
            throw Error(TIDAL_ERROR_PLUGIN,
                        fmt::format("refusing to load policy '{}' ({}): {}, so another user could replace "
                                    "the code tidal runs",
                                    name, file.string(), why),
                        SharedLibrary::kWritableHint);
    return SharedLibrary(file);
}

} // namespace

PolicyPlugin::PolicyPlugin(std::string instance_name, const std::filesystem::path &file,
                           const toml::table *options, const std::filesystem::path &config_source,
                           const tidal_policy_system *system, bool allow_writable)
    : name_(std::move(instance_name)), library_(open_plugin(name_, file, allow_writable)),
      options_(std::make_unique<OptionsView>(options, fmt::format("[policy.{}]", name_), config_source))
{
    name_.copy(placed_name_, sizeof placed_name_ - 1); // the rest stays NUL
    const std::string who = fmt::format("policy '{}' ({})", name_, file.string());
    if (!library_.valid())
        throw Error(TIDAL_ERROR_PLUGIN, fmt::format("cannot load {}: {}", who, library_.error()),
                    "check that the file is a shared object built for this machine");
    auto negotiate = reinterpret_cast<tidal_policy_negotiate_fn>(library_.symbol(TIDAL_POLICY_ENTRY_SYMBOL));
    if (!negotiate)
        throw Error(TIDAL_ERROR_PLUGIN, fmt::format("{} does not export {}", who, TIDAL_POLICY_ENTRY_SYMBOL),
                    "a policy plugin exports exactly that function (see api/tidal/policy.h); is it declared "
                    "extern \"C\" with TIDAL_POLICY_EXPORT?");
    hooks_.struct_size = sizeof(hooks_);
    tidal_status rc = negotiate(TIDAL_POLICY_ABI_VERSION, &abi_, &hooks_);
    hooks_.struct_size = sizeof(hooks_); // the plugin must not widen what the core reads
    if (rc != TIDAL_OK)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} found no common policy ABI version: tidal offers up to {}, the plugin "
                                "answered {} (version {})",
                                who, TIDAL_POLICY_ABI_VERSION, tidal_status_name(rc), abi_),
                    "rebuild the plugin against this tidal's policy.h, or upgrade tidal");
    if (abi_ < 1 || abi_ > TIDAL_POLICY_ABI_VERSION)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} chose policy ABI version {}, outside the offered 1..{}", who, abi_,
                                TIDAL_POLICY_ABI_VERSION),
                    "the plugin must answer a version no higher than the core's offer");
    if (!hooks_.place && !hooks_.recover && !hooks_.plan_prefetch && !hooks_.evict)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} provides no decision hook (place, recover, plan_prefetch or evict)", who),
                    "set at least one of hooks->place, ->recover, ->plan_prefetch, ->evict in the negotiation "
                    "function");

    check_option_keys();
    options_->raise_if_errors(fmt::format("policy '{}'", name_));

    if (hooks_.init) {
        tidal_policy_init_args args{};
        args.struct_size = sizeof(args);
        args.instance_name = name_.c_str();
        args.options = options_.get();
        args.options_api = OptionsView::api();
        args.system = system;
        tidal_status init_rc = hooks_.init(&args, &state_);
        initialised_ = init_rc == TIDAL_OK;
        if (!options_->errors().empty()) {
            if (initialised_ && hooks_.fini)
                hooks_.fini(state_);
            initialised_ = false;
            options_->raise_if_errors(fmt::format("policy '{}'", name_));
        }
        if (init_rc != TIDAL_OK)
            throw Error(TIDAL_ERROR_PLUGIN, fmt::format("{} failed to initialise: {}", who, tidal_status_name(init_rc)),
                        "see the plugin's documentation for its requirements");
    } else {
        initialised_ = true;
    }
}

PolicyPlugin::~PolicyPlugin()
{
    if (initialised_ && hooks_.fini)
        hooks_.fini(state_);
}

void PolicyPlugin::check_option_keys()
{
    const toml::table *table = options_->table();
    if (!hooks_.option_keys || !table)
        return;
    std::vector<std::string_view> allowed;
    for (const char *const *k = hooks_.option_keys; *k; ++k)
        allowed.emplace_back(*k);
    for (const auto &[key, node] : *table) {
        std::string_view k = key.str();
        if (std::find(allowed.begin(), allowed.end(), k) != allowed.end())
            continue;
        std::string suggestion = nearest_key(k, allowed);
        std::string accepted;
        for (auto a : allowed)
            accepted += fmt::format("{}'{}'", accepted.empty() ? "" : ", ", a);
        options_->record_error(std::string(k).c_str(),
                               suggestion.empty()
                                   ? fmt::format("unknown key '{}' (accepted: {})", k, accepted.empty() ? "none" : accepted)
                                   : fmt::format("unknown key '{}'; did you mean '{}'?", k, suggestion));
    }
}

tidal_policy_verdict PolicyPlugin::place(const tidal_place_request &request, tidal_placement &out) const
{
    return hooks_.place ? hooks_.place(state_, &request, &out) : TIDAL_POLICY_DEFER;
}

tidal_policy_verdict PolicyPlugin::recover(const tidal_error_event &event, tidal_recovery &out) const
{
    return hooks_.recover ? hooks_.recover(state_, &event, &out) : TIDAL_POLICY_DEFER;
}

tidal_policy_verdict PolicyPlugin::plan_prefetch(const tidal_prefetch_request &request, tidal_prefetch_plan &out) const
{
    return hooks_.plan_prefetch ? hooks_.plan_prefetch(state_, &request, &out) : TIDAL_POLICY_DEFER;
}

tidal_policy_verdict PolicyPlugin::evict(const tidal_evict_request &request, tidal_evict_plan &out) const
{
    return hooks_.evict ? hooks_.evict(state_, &request, &out) : TIDAL_POLICY_DEFER;
}

} // namespace tidal

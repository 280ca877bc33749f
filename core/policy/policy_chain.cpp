#include "policy/policy_chain.h"

#include <algorithm>
#include <cstring>

#include "config/toml_include.h"

#include <fmt/format.h>

#include "plugin/shared_library.h"
#include "policy/core_defaults.h"
#include "status/error.h"

#ifndef TIDAL_POLICY_INSTALL_DIR
#define TIDAL_POLICY_INSTALL_DIR ""
#endif

namespace tidal {
namespace {

// Enum fields a plugin or caller filled may hold any number; reading them as the enum type
// would be undefined behaviour (UBSan flags it), so the checks read the integer.
template <typename Enum> int32_t raw(const Enum &e)
{
    static_assert(sizeof(Enum) == sizeof(int32_t));
    int32_t v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

// The first answer in the chain that is not DEFER: who gave it, its verdict (read as an
// integer, see raw) and the out-struct it filled.
template <typename Out> struct Answer {
    const PolicyPlugin *plugin;
    int32_t verdict;
    Out out;
};

// The one "ask each policy" loop of every hook: the plugins that have the hook (`has`), in
// chain order, each asked (`ask`) with its own copy of `blank`, whose reason (where the struct
// has one) is then NUL-terminated, since a plugin may fill all of it. A DEFER is shown to
// `deferred` and passes the question on. nullopt when every policy deferred: the caller then
// applies the core's default.
template <typename Out, typename Request, typename Has, typename Ask, typename Deferred = void (*)(const Out &)>
std::optional<Answer<Out>> first_answer(const std::vector<std::unique_ptr<PolicyPlugin>> &plugins, Has has, Ask ask,
                                        const Request &request, const Out &blank,
                                        Deferred deferred = [](const Out &) {})
{
    for (const auto &plugin : plugins) {
        if (!((*plugin).*has)())
            continue;
        Answer<Out> answer{plugin.get(), 0, blank};
        answer.verdict = raw(((*plugin).*ask)(request, answer.out));
        if constexpr (requires { answer.out.reason; })
            answer.out.reason[sizeof(answer.out.reason) - 1] = '\0';
        if (answer.verdict != TIDAL_POLICY_DEFER)
            return answer;
        deferred(answer.out);
    }
    return std::nullopt;
}

std::string policy_name(const PolicyPlugin &plugin) { return fmt::format("policy '{}'", plugin.name()); }

std::string position_in_policies(const Settings &settings, size_t index)
{
    std::string file = settings.source.empty() ? "<string>" : settings.source.string();
    if (settings.document)
        if (const toml::array *list = (*settings.document)["policies"].as_array(); list && index < list->size()) {
            const auto &begin = list->get(index)->source().begin;
            return fmt::format("{}:{}:{}: ", file, begin.line, begin.column);
        }
    return fmt::format("{}: ", file);
}

} // namespace

std::vector<std::filesystem::path> PolicyChain::search_path(const Settings &settings, const std::string &name)
{
    std::vector<std::filesystem::path> folders = settings.policy_path;
    const auto own = SharedLibrary::own_directory();
    if (!own.empty()) {
        folders.push_back(own / "tidal" / "policies");            // installed next to libtidal.so
        folders.push_back(own.parent_path() / "policies" / name); // the build tree: build/policies/NAME
    }
    if (*TIDAL_POLICY_INSTALL_DIR)
        folders.emplace_back(TIDAL_POLICY_INSTALL_DIR);
    return folders;
}

std::filesystem::path PolicyChain::locate(const Settings &settings, const std::string &name, size_t index)
{
    // A name that looks like a path is one, relative to the configuration's folder.
    if (name.find('/') != std::string::npos || name.ends_with(".so")) {
        std::filesystem::path p(name);
        if (p.is_relative())
            p = settings.base_dir / p;
        std::error_code ec;
        if (std::filesystem::is_regular_file(p, ec))
            return p;
        throw Error(TIDAL_ERROR_CONFIG, fmt::format("{}policy file {} does not exist", position_in_policies(settings, index), p.string()),
                    "give an existing path, or a plugin name found on policy_path");
    }
    const auto folders = search_path(settings, name);
    const std::string file = fmt::format("tidal-policy-{}.so", name);
    auto found = SharedLibrary::find_in(folders, file);
    if (found.empty()) {
        const std::string searched = SharedLibrary::existing_folders(folders);
        throw Error(TIDAL_ERROR_CONFIG,
                    fmt::format("{}policy '{}' not found: no {} in {}", position_in_policies(settings, index), name, file,
                                searched.empty() ? "any folder of the policy search path (none exists)" : searched),
                    "add the plugin's folder to policy_path (or TIDAL_POLICY_PATH), or fix the name");
    }
    return found;
}

PolicyChain::PolicyChain(const Settings &settings, const tidal_policy_system *system) : system_(system)
{
    const toml::table *policy_tables = nullptr;
    if (settings.document)
        policy_tables = (*settings.document)["policy"].as_table();
    for (size_t i = 0; i < settings.policies.size(); ++i) {
        const std::string &name = settings.policies[i];
        const toml::table *options = policy_tables ? (*policy_tables)[name].as_table() : nullptr;
        plugins_.push_back(std::make_unique<PolicyPlugin>(name, locate(settings, name, i), options,
                                                          settings.source, system_,
                                                          settings.security.allow_writable_plugins));
        plans_prefetch_ = plans_prefetch_ || plugins_.back()->can_plan_prefetch();
    }
}

void PolicyChain::validate(const tidal_placement &p, const char *plugin) const
{
    // Names are formatted only on the error paths: this runs on every allocation.
    const bool from_plugin = plugin != nullptr;
    auto who = [&] { return from_plugin ? fmt::format("policy '{}'", plugin) : std::string("the request"); };
    // Malformed answers are the plugin's fault; well-formed ones the device cannot honour are
    // NOT_SUPPORTED, whoever asked (the caller may have requested the kind explicitly).
    const tidal_status malformed = from_plugin ? TIDAL_ERROR_PLUGIN : TIDAL_ERROR_INVALID_ARGUMENT;
    if (raw(p.kind) <= TIDAL_KIND_AUTO || raw(p.kind) >= TIDAL_KIND_COUNT)
        throw Error(malformed, fmt::format("{} decided kind {}, which is not a tidal_kind (1..{})", who(),
                                           raw(p.kind), TIDAL_KIND_COUNT - 1),
                    "a placement must name a concrete kind");
    const bool host = TIDAL_KIND_IS_HOST(p.kind);
    const bool device_ok = (p.device >= 0 && p.device < system_->device_count) || (host && p.device == TIDAL_DEVICE_HOST);
    if (!device_ok)
        throw Error(from_plugin ? TIDAL_ERROR_PLUGIN : TIDAL_ERROR_NOT_FOUND,
                    fmt::format("{} decided device {} for {} memory; the system has {} device(s)", who(), p.device,
                                tidal_kind_name(p.kind), system_->device_count),
                    host ? "host kinds take a device index or TIDAL_DEVICE_HOST" : "use an index below the device count");
    if (p.flags & ~TIDAL_PLACEMENT_FLAGS_ALL)
        throw Error(malformed, fmt::format("{} decided unknown placement flags {:#x}", who(), p.flags & ~TIDAL_PLACEMENT_FLAGS_ALL),
                    "use TIDAL_PLACEMENT_* bits");
    if (p.advice & ~TIDAL_ADVICE_ALL)
        throw Error(malformed, fmt::format("{} decided unknown advice bits {:#x}", who(), p.advice & ~TIDAL_ADVICE_ALL),
                    "use TIDAL_ADVICE_* bits");
    if (p.advice && !TIDAL_KIND_IS_MANAGED(p.kind))
        throw Error(malformed, fmt::format("{} attached advice to {} memory; only managed kinds take advice", who(),
                                           tidal_kind_name(p.kind)),
                    "drop the advice or choose a managed kind");
    if ((p.advice & TIDAL_ADVICE_PREFERRED_DEVICE) && (p.advice & TIDAL_ADVICE_PREFERRED_HOST))
        throw Error(malformed, fmt::format("{} asked for both the device and the host as preferred location", who()),
                    "choose one preferred location");
    if (host)
        return;
    const tidal_policy_device &dev = system_->devices[p.device];
    if (TIDAL_KIND_IS_MANAGED(p.kind) && !(dev.flags & TIDAL_DEVICE_FLAG_MANAGED))
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("{} placed managed memory on device {}, which has no managed memory", who(), p.device),
                    "choose device or pinned memory on this device");
    const bool fine_kind = p.kind == TIDAL_KIND_DEVICE_FINE || p.kind == TIDAL_KIND_MANAGED_COARSE ||
                           (p.advice & TIDAL_ADVICE_COARSE_GRAIN);
    if (fine_kind && !(dev.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED))
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("{} asked for fine/coarse-grained memory ({}) on device {}, which has no such kinds "
                                "(they exist on AMD GPUs)",
                                who(), tidal_kind_name(p.kind), p.device),
                    "use device or managed memory on this device");
}

std::vector<tidal_policy_part> PolicyChain::read_split(const tidal_placement &p, size_t size, const char *plugin) const
{
    std::vector<tidal_policy_part> parts;
    if (!TIDAL_COVERS(p.struct_size, tidal_placement, part_count) || p.part_count == 0)
        return parts;
    if (p.parts == nullptr || p.parts[0].struct_size < offsetof(tidal_policy_part, device) + sizeof(int32_t))
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("policy '{}' answered a split of {} parts without readable parts (NULL, or a "
                                "struct_size too small)", plugin, p.part_count),
                    "point `parts` at tidal_policy_part entries with struct_size set");
    if (!TIDAL_KIND_IS_MANAGED(p.kind))
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("policy '{}' split {} memory over devices; only managed kinds can be split", plugin,
                                tidal_kind_name(p.kind)),
                    "split managed allocations only");
    const size_t stride = p.parts[0].struct_size;
    size_t end = 0;
    for (size_t i = 0; i < p.part_count; ++i) {
        tidal_policy_part part{};
        std::memcpy(&part, reinterpret_cast<const char *>(p.parts) + i * stride,
                    std::min(stride, sizeof(tidal_policy_part)));
        if (part.device < 0 || part.device >= system_->device_count)
            throw Error(TIDAL_ERROR_PLUGIN,
                        fmt::format("policy '{}' put part {} of a split on device {}; the system has {} device(s)", plugin,
                                    i, part.device, system_->device_count),
                        "name a device index for every part");
        if (part.offset != end || part.size == 0 || part.size > size - end)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                        fmt::format("policy '{}' split the allocation of {} bytes into parts that do not cover it: part "
                                    "{} is [{}, +{}) where [{}, ...) was next",
                                    plugin, size, i, part.offset, part.size, end),
                        "parts must follow each other from offset 0 to the allocation's size, none empty (check the "
                        "policy's part sizes against the allocation)");
        end += part.size;
        part.struct_size = sizeof(part);
        parts.push_back(part);
    }
    if (end != size)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("policy '{}' split the allocation of {} bytes into parts that do not cover it: they end "
                                "at {}",
                                plugin, size, end),
                    "parts must follow each other from offset 0 to the allocation's size (check the policy's part "
                    "sizes against the allocation)");
    return parts;
}

Decision PolicyChain::place(const tidal_place_request &request, std::vector<tidal_policy_part> *split) const
{
    tidal_placement blank{};
    blank.struct_size = sizeof(blank);
    blank.device = TIDAL_DEVICE_DEFAULT;
    bool deferrals_cacheable = true; // every policy that deferred would defer this request again
    const auto answer = first_answer(plugins_, &PolicyPlugin::can_place, &PolicyPlugin::place, request, blank,
                                     [&](const tidal_placement &out) {
                                         deferrals_cacheable = deferrals_cacheable && (out.flags & TIDAL_PLACEMENT_CACHEABLE);
                                     });
    Decision decision{};
    if (answer) {
        const std::string who = policy_name(*answer->plugin);
        if (answer->verdict == TIDAL_POLICY_REFUSE)
            throw Error(TIDAL_ERROR_PLUGIN,
                        fmt::format("{} refused the allocation of {} bytes: {}", who, request.size,
                                    answer->out.reason[0] ? answer->out.reason : "no reason given"),
                        "change the request or the policy's configuration");
        if (answer->verdict != TIDAL_POLICY_DECIDED)
            throw Error(TIDAL_ERROR_PLUGIN, fmt::format("{} answered verdict {}, which is not a tidal_policy_verdict", who,
                                                        static_cast<int>(answer->verdict)),
                        "a policy answers DEFER, DECIDED or REFUSE");
        validate(answer->out, answer->plugin->name().c_str());
        std::vector<tidal_policy_part> parts = read_split(answer->out, request.size, answer->plugin->name().c_str());
        decision = Decision{answer->out, answer->plugin->placed_name()};
        decision.placement.parts = nullptr; // the plugin's memory: only `split` carries them on
        decision.placement.part_count = 0;
        if (!parts.empty()) {
            if (!split)
                throw Error(TIDAL_ERROR_PLUGIN,
                            fmt::format("{} answered a split where none can be taken", who),
                            "split allocations in place answers only");
            decision.placement.flags &= ~TIDAL_PLACEMENT_CACHEABLE;
            *split = std::move(parts);
        }
    } else {
        decision = Decision{CoreDefaults::place(request), CoreDefaults::kName};
        validate(decision.placement, nullptr);
    }
    if (!deferrals_cacheable)
        decision.placement.flags &= ~TIDAL_PLACEMENT_CACHEABLE;
    return decision;
}

std::optional<Decision> PolicyChain::recover(const tidal_error_event &event) const
{
    tidal_recovery blank{};
    blank.struct_size = sizeof(blank);
    blank.placement.struct_size = sizeof(blank.placement);
    blank.placement.device = TIDAL_DEVICE_DEFAULT;
    const auto answer = first_answer(plugins_, &PolicyPlugin::can_recover, &PolicyPlugin::recover, event, blank);
    if (!answer)
        return std::nullopt; // the core's default is to give the error to the caller
    const tidal_recovery &out = answer->out;
    if (answer->verdict == TIDAL_POLICY_REFUSE || raw(out.action) == TIDAL_RECOVER_FAIL)
        return std::nullopt;
    if (answer->verdict != TIDAL_POLICY_DECIDED || raw(out.action) != TIDAL_RECOVER_RETRY ||
        event.operation != TIDAL_OP_ALLOC)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} answered an invalid recovery (verdict {}, action {})", policy_name(*answer->plugin),
                                answer->verdict, raw(out.action)),
                    "recover answers DEFER, or DECIDED with FAIL, or RETRY for an allocation");
    validate(out.placement, answer->plugin->name().c_str());
    Decision retry{out.placement, answer->plugin->name().c_str()};
    retry.placement.parts = nullptr; // a retry is never split: parts are read from place answers only
    retry.placement.part_count = 0;
    return retry;
}

PrefetchDecision PolicyChain::core_prefetch() noexcept
{
    PrefetchDecision d;
    d.planned_by = CoreDefaults::kName;
    return d;
}

PrefetchDecision PolicyChain::plan_prefetch(const tidal_prefetch_request &request) const
{
    tidal_prefetch_plan blank{};
    blank.struct_size = sizeof(blank);
    const auto answer =
        first_answer(plugins_, &PolicyPlugin::can_plan_prefetch, &PolicyPlugin::plan_prefetch, request, blank);
    if (!answer)
        return core_prefetch();
    const tidal_prefetch_plan &out = answer->out;
    const std::string who = policy_name(*answer->plugin);
    if (answer->verdict == TIDAL_POLICY_REFUSE)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} refused to plan the migration of {} bytes at {}: {}", who, request.size, request.ptr,
                                out.reason[0] ? out.reason : "no reason given"),
                    "change the declaration or the policy's configuration");
    const int32_t action = raw(out.action);
    if (answer->verdict != TIDAL_POLICY_DECIDED || (action != TIDAL_PREFETCH_MIGRATE && action != TIDAL_PREFETCH_SKIP))
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} answered an invalid prefetch plan (verdict {}, action {})", who, answer->verdict, action),
                    "plan_prefetch answers DEFER, REFUSE, or DECIDED with MIGRATE or SKIP");
    if (out.advice_set & ~TIDAL_ADVICE_ALL)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} planned unknown advice bits {:#x}", who, out.advice_set & ~TIDAL_ADVICE_ALL),
                    "use TIDAL_ADVICE_* bits");
    if ((out.advice_set & TIDAL_ADVICE_PREFERRED_DEVICE) && (out.advice_set & TIDAL_ADVICE_PREFERRED_HOST))
        throw Error(TIDAL_ERROR_PLUGIN, fmt::format("{} planned both preferred-device and preferred-host advice", who),
                    "a range has one preferred location");
    if (out.chunk_size != 0 && out.chunk_size % 4096 != 0)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("{} planned a chunk of {} bytes, not a multiple of 4 KiB", who, out.chunk_size),
                    "use 0 for the configured chunk size, or whole pages");
    return PrefetchDecision{action, out.chunk_size, out.advice_set, answer->plugin->name().c_str()};
}

std::vector<size_t> PolicyChain::evict(const tidal_evict_request &request, const char **who_out) const
{
    std::vector<size_t> order(request.candidate_count);
    tidal_evict_plan blank{};
    blank.struct_size = sizeof(blank);
    blank.order = order.data();
    blank.count = 0;
    if (const auto answer = first_answer(plugins_, &PolicyPlugin::can_evict, &PolicyPlugin::evict, request, blank)) {
        const tidal_evict_plan &out = answer->out;
        const std::string who = policy_name(*answer->plugin);
        if (answer->verdict == TIDAL_POLICY_REFUSE)
            throw Error(TIDAL_ERROR_BUDGET_EXCEEDED,
                        fmt::format("{} refused to evict on device {} ({} bytes needed): {}", who, request.device,
                                    request.need, out.reason[0] ? out.reason : "no reason given"),
                        "raise the budget or declare less at once");
        if (answer->verdict != TIDAL_POLICY_DECIDED || out.count > request.candidate_count)
            throw Error(TIDAL_ERROR_PLUGIN,
                        fmt::format("{} answered an invalid eviction plan (verdict {}, {} of {} candidates)", who,
                                    answer->verdict, out.count, request.candidate_count),
                        "evict answers DEFER, REFUSE, or DECIDED with count <= candidate_count");
        std::vector<bool> seen(request.candidate_count, false);
        for (size_t i = 0; i < out.count; ++i) {
            if (order[i] >= request.candidate_count || seen[order[i]])
                throw Error(TIDAL_ERROR_PLUGIN,
                            fmt::format("{} named candidate {} at position {} of its eviction order, which is {}", who,
                                        order[i], i,
                                        order[i] >= request.candidate_count ? "out of range" : "a repeat"),
                            "name each candidate index at most once");
            seen[order[i]] = true;
        }
        order.resize(out.count);
        if (who_out)
            *who_out = answer->plugin->name().c_str();
        return order;
    }
    // Least recently used first; among equals the larger range, so fewer calls free the need.
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const tidal_resident_range &x = request.candidates[a], &y = request.candidates[b];
        return x.last_use != y.last_use ? x.last_use < y.last_use : x.size > y.size;
    });
    if (who_out)
        *who_out = CoreDefaults::kName;
    return order;
}

} // namespace tidal

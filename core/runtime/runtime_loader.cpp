#include "runtime/runtime_loader.h"

#include "config/toml_include.h"

#include <fmt/format.h>

#include "log/logger.h"
#include "policy/options_view.h"
#include "runtime/sim/sim_module.h"
#include "status/error_table.h"

#ifndef TIDAL_RUNTIME_INSTALL_DIR
#define TIDAL_RUNTIME_INSTALL_DIR ""
#endif

namespace tidal {

// The module's description line holds one XNACK verdict and reason per device: room for many
// devices (the public runtime_detail field shows only its start).
constexpr size_t kDetailCapacity = 4096;

std::vector<std::filesystem::path> RuntimeLoader::search_path(const Settings &settings, const std::string &name)
{
    std::vector<std::filesystem::path> folders = settings.runtime_path;
    const auto own = SharedLibrary::own_directory();
    if (!own.empty()) {
        folders.push_back(own / "tidal" / "runtimes"); // installed next to libtidal.so
        folders.push_back(own / "runtime" / name);    // the build tree: build/core/runtime/NAME
    }
    if (*TIDAL_RUNTIME_INSTALL_DIR)
        folders.emplace_back(TIDAL_RUNTIME_INSTALL_DIR);
    return folders;
}

std::unique_ptr<Runtime> RuntimeLoader::load(const Settings &settings)
{
    if (settings.runtime == "sim")
        return load_sim(settings);
    if (settings.runtime != "auto")
        return load_module(settings, settings.runtime);

    std::string reasons;
    for (const char *name : {"hip", "cuda"}) {
        try {
            return load_module(settings, name);
        } catch (const Error &e) {
            reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", name,
                                   e.native().name.empty() ? e.message()
                                                           : fmt::format("{} ({})", e.native().name, e.native().code));
        }
    }
    // Said on every auto run, so the line itself tells how to choose the simulated device and
    // be quiet.
    log_warn(fmt::format("runtime \"auto\": no GPU runtime is usable ({}); using the simulated device "
                         "(to silence this, set runtime = \"sim\" in the configuration or TIDAL_RUNTIME=sim)",
                         reasons));
    return load_sim(settings);
}

std::unique_ptr<Runtime> RuntimeLoader::load_sim(const Settings &settings)
{
    void *instance = nullptr;
    char detail[kDetailCapacity] = {};
    int rc = sim::sim_create(settings.sim, &instance, detail, sizeof detail);
    const tidal_rt_ops *ops = sim::sim_ops(settings.sim);
    if (rc != 0)
        throw ErrorTable::translate(ops->family, rc, ops->error_name(rc),
                                    fmt::format("starting the simulated device ({})", detail));
    return std::make_unique<Runtime>(ops, instance, detail);
}

std::unique_ptr<Runtime> RuntimeLoader::load_module(const Settings &settings, const std::string &name)
{
    const std::string file = fmt::format("tidal-runtime-{}.so", name);
    const auto folders = search_path(settings, name);
    const auto path = SharedLibrary::find_in(folders, file);
    if (path.empty()) {
        const std::string searched = SharedLibrary::existing_folders(folders);
        throw Error(TIDAL_ERROR_RUNTIME,
                    fmt::format("runtime module {} not found (searched {})", file,
                                searched.empty() ? "no folder: none of the module search path exists" : searched),
                    fmt::format("build tidal with the {} feature, add its folder to runtime_path, or use runtime = \"sim\"", name));
    }
    if (!settings.security.allow_writable_plugins)
        if (std::string why = SharedLibrary::writable_by_others(path); !why.empty())
            throw Error(TIDAL_ERROR_RUNTIME,
                        fmt::format("refusing to load runtime module {}: {}, so another user could replace the "
                                    "code tidal runs",
                                    path.string(), why),
                        SharedLibrary::kWritableHint);
    SharedLibrary module(path);
    if (!module.valid())
        throw Error(TIDAL_ERROR_RUNTIME, fmt::format("cannot load runtime module {}: {}", path.string(), module.error()),
                    "check that the GPU runtime libraries it needs are installed (ldd shows which)");
    auto negotiate = reinterpret_cast<tidal_rt_negotiate_fn>(module.symbol(TIDAL_RT_ENTRY_SYMBOL));
    if (!negotiate)
        throw Error(TIDAL_ERROR_RUNTIME,
                    fmt::format("runtime module {} does not export {}", path.string(), TIDAL_RT_ENTRY_SYMBOL),
                    "it is not a tidal runtime module, or was built for another tidal");
    uint32_t chosen = 0;
    const tidal_rt_ops *ops = nullptr;
    int rc = negotiate(TIDAL_RT_ABI_VERSION, &chosen, &ops);
    if (rc != 0 || chosen != TIDAL_RT_ABI_VERSION || !ops || ops->abi_version != TIDAL_RT_ABI_VERSION ||
        ops->struct_size < sizeof(tidal_rt_ops))
        throw Error(TIDAL_ERROR_RUNTIME,
                    fmt::format("runtime module {} speaks runtime ABI {}; this libtidal speaks {}", path.string(),
                                ops ? ops->abi_version : chosen, TIDAL_RT_ABI_VERSION),
                    "install the module built with this libtidal");
    if (!ops->create || !ops->destroy || !ops->error_name || !ops->device_count || !ops->device_props ||
        !ops->alloc || !ops->free || !ops->mem_info)
        throw Error(TIDAL_ERROR_RUNTIME, fmt::format("runtime module {} lacks a mandatory entry point", path.string()),
                    "install the module built with this libtidal");

    const toml::table *section = settings.document ? (*settings.document)[name].as_table() : nullptr;
    OptionsView options(section, fmt::format("[{}]", name), settings.source);
    void *instance = nullptr;
    char detail[kDetailCapacity] = {};
    rc = ops->create(&options, OptionsView::api(), &instance, detail, sizeof detail);
    if (rc != 0)
        throw ErrorTable::translate(ops->family, rc, ops->error_name(rc),
                                    fmt::format("starting the {} runtime ({})", name, path.string()));
    try {
        options.raise_if_errors(fmt::format("runtime {}", name));
    } catch (...) {
        ops->destroy(instance);
        throw;
    }
    return std::make_unique<Runtime>(ops, instance, detail, std::move(module));
}

} // namespace tidal

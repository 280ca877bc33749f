#include "version_report.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <tidal/tidal.h>

#include "build_features.h"

namespace tidal_tool {
namespace {

namespace fs = std::filesystem;

const char *yes_no(bool b) { return b ? "yes" : "no"; }

// The folder of the libtidal this process loaded: the public library, asked where its own
// exported function lives.
fs::path library_file()
{
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&tidal_version_string), &info) && info.dli_fname) {
        std::error_code ec;
        const fs::path resolved = fs::canonical(info.dli_fname, ec);
        return ec ? fs::path(info.dli_fname) : resolved;
    }
    return {};
}

std::vector<fs::path> env_folders(const char *variable)
{
    std::vector<fs::path> folders;
    const char *value = std::getenv(variable);
    std::string rest = value ? value : "";
    while (!rest.empty()) {
        const size_t colon = rest.find(':');
        if (colon != 0)
            folders.emplace_back(rest.substr(0, colon));
        rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    }
    return folders;
}

bool is_folder(const fs::path &p)
{
    std::error_code ec;
    return fs::is_directory(p, ec);
}

// The search order libtidal documents (README, "Runtime modules" / "Policies"): the
// configuration's *_path (with the environment variable first), then beside the library, then
// the build tree's folders (shown only where they exist: an installed tidal has none).
std::string search_list(const char *variable, const char *key, const fs::path &installed,
                        const std::vector<fs::path> &build_tree)
{
    std::string out = fmt::format("    {} folders, then the configuration's {}\n", variable, key);
    for (const auto &f : env_folders(variable))
        out += fmt::format("      {}{}\n", f.string(), is_folder(f) ? "" : "  (does not exist)");
    out += fmt::format("    {}{}\n", installed.string(), is_folder(installed) ? "" : "  (does not exist)");
    for (const auto &f : build_tree)
        if (is_folder(f))
            out += fmt::format("    {}  (build tree)\n", f.string());
    return out;
}

std::string module_line(const char *name, bool built, const std::vector<fs::path> &folders)
{
    if (!built)
        return fmt::format("{} module: not built", name);
    const std::string file = fmt::format("tidal-runtime-{}.so", name);
    std::error_code ec;
    for (const auto &f : folders)
        if (fs::is_regular_file(f / file, ec))
            return fmt::format("{} module: built ({})", name, (f / file).string());
    return fmt::format("{} module: built, not found beside libtidal", name);
}

} // namespace

std::string version_report()
{
    const fs::path lib = library_file();
    const fs::path dir = lib.parent_path();
    std::string out = fmt::format("tidal {}\n", TIDAL_VERSION_STRING);
    out += fmt::format("library: libtidal {}{}\n", tidal_version_string(), lib.empty() ? "" : " (" + lib.string() + ")");
    const std::vector<fs::path> module_folders = {dir / "tidal" / "runtimes", dir / "runtime" / "hip", dir / "runtime" / "cuda"};
    out += fmt::format("runtimes: sim (built in); {}; {}\n", module_line("hip", TIDAL_TOOL_HIP_MODULE, module_folders),
                       module_line("cuda", TIDAL_TOOL_CUDA_MODULE, module_folders));
    out += fmt::format("features: validation kernels for AMD (hipcc): {}; for NVIDIA (nvcc): {}; Fortran binding: {}; "
                       "hwloc (NUMA node of each GPU): {}\n",
                       yes_no(TIDAL_TOOL_HIP_KERNELS), yes_no(TIDAL_TOOL_CUDA_KERNELS), yes_no(TIDAL_TOOL_FORTRAN),
                       yes_no(TIDAL_TOOL_HWLOC));
    out += "runtime modules (tidal-runtime-NAME.so) are looked for in:\n";
    out += search_list("TIDAL_RUNTIME_PATH", "runtime_path", dir / "tidal" / "runtimes",
                       {dir / "runtime" / "hip", dir / "runtime" / "cuda"});
    out += "policies (tidal-policy-NAME.so) are looked for in:\n";
    std::vector<fs::path> built_policies;
    std::error_code ec;
    if (is_folder(dir.parent_path() / "policies"))
        for (const auto &entry : fs::directory_iterator(dir.parent_path() / "policies", ec))
            if (entry.is_directory(ec))
                built_policies.push_back(entry.path());
    std::sort(built_policies.begin(), built_policies.end());
    out += search_list("TIDAL_POLICY_PATH", "policy_path", dir / "tidal" / "policies", built_policies);
    return out;
}

} // namespace tidal_tool

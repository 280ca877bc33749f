#include "plugin/shared_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <system_error>
#include <utility>

namespace tidal {

SharedLibrary::SharedLibrary(const std::filesystem::path &path) : path_(path)
{
    dlerror();
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
        const char *why = dlerror();
        error_ = why ? why : "dlopen failed";
    }
}

SharedLibrary::~SharedLibrary()
{
    if (handle_)
        dlclose(handle_);
}

SharedLibrary::SharedLibrary(SharedLibrary &&other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)),
      error_(std::move(other.error_))
{
}

SharedLibrary &SharedLibrary::operator=(SharedLibrary &&other) noexcept
{
    if (this != &other) {
        if (handle_)
            dlclose(handle_);
        handle_ = std::exchange(other.handle_, nullptr);
        path_ = std::move(other.path_);
        error_ = std::move(other.error_);
    }
    return *this;
}

void *SharedLibrary::symbol(const char *name)
{
    if (!handle_)
        return nullptr;
    dlerror();
    void *address = dlsym(handle_, name);
    if (!address) {
        const char *why = dlerror();
        error_ = why ? why : std::string("symbol ") + name + " not found";
    }
    return address;
}

std::filesystem::path SharedLibrary::own_directory()
{
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&SharedLibrary::own_directory), &info) && info.dli_fname) {
        std::error_code ec;
        auto resolved = std::filesystem::canonical(info.dli_fname, ec);
        return (ec ? std::filesystem::path(info.dli_fname) : resolved).parent_path();
    }
    return {};
}

namespace {

// Why `path` (the file, or one of its folders) lets others replace the code; "" when it does not.
std::string writable_entry(const std::filesystem::path &path, bool is_file)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || (st.st_mode & S_IWOTH) == 0)
        return {};
    if (is_file)
        return path.string() + " is world-writable";
    if ((st.st_mode & S_ISVTX) != 0)
        return {};
    return "its folder " + path.string() + " is world-writable (and not sticky)";
}

std::string writable_along(const std::filesystem::path &file)
{
    if (auto why = writable_entry(file, true); !why.empty())
        return why;
    for (auto folder = file.parent_path(); !folder.empty(); folder = folder.parent_path()) {
        if (auto why = writable_entry(folder, false); !why.empty())
            return why;
        if (folder == folder.root_path())
            break;
    }
    return {};
}

} // namespace

std::string SharedLibrary::writable_by_others(const std::filesystem::path &file)
{
    std::error_code ec;
    const auto given = std::filesystem::absolute(file, ec).lexically_normal();
    if (ec)
        return {};
    if (auto why = writable_along(given); !why.empty())
        return why;
    const auto resolved = std::filesystem::canonical(given, ec);
    if (ec || resolved == given)
        return {};
    return writable_along(resolved);
}

std::filesystem::path SharedLibrary::find_in(const std::vector<std::filesystem::path> &folders,
                                             const std::string &file_name)
{
    std::error_code ec;
    for (const auto &folder : folders) {
        auto candidate = folder / file_name;
        if (std::filesystem::is_regular_file(candidate, ec))
            return candidate;
    }
    return {};
}

std::string SharedLibrary::existing_folders(const std::vector<std::filesystem::path> &folders)
{
    std::string text;
    std::error_code ec;
    for (const auto &folder : folders)
        if (std::filesystem::is_directory(folder, ec))
            text += (text.empty() ? "" : ", ") + folder.string();
    return text;
}

} // namespace tidal

#include "runtime/shared_library.h"

#include <dlfcn.h>

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

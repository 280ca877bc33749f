// A dlopen'ed shared object, closed when the owner goes. One piece of code for both kinds of
// plugin tidal loads: policy plugins and device-runtime modules.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tidal {

class SharedLibrary {
public:
    SharedLibrary() = default;
    // Opens `path` with RTLD_NOW | RTLD_LOCAL. On failure, valid() is false and error() says why.
    explicit SharedLibrary(const std::filesystem::path &path);
    ~SharedLibrary();
    SharedLibrary(SharedLibrary &&other) noexcept;
    SharedLibrary &operator=(SharedLibrary &&other) noexcept;
    SharedLibrary(const SharedLibrary &) = delete;
    SharedLibrary &operator=(const SharedLibrary &) = delete;

    bool valid() const noexcept { return handle_ != nullptr; }
    const std::string &error() const noexcept { return error_; }
    const std::filesystem::path &path() const noexcept { return path_; }
    // The address of an exported symbol, or nullptr (error() then says why).
    void *symbol(const char *name);

    // The folder holding the binary that contains libtidal's code (libtidal.so itself, or a
    // test executable linking the core statically).
    static std::filesystem::path own_directory();
    // Why `file` is one another user could replace, or "" when it is not: the file itself is
    // world-writable, or a folder it is in (up to /, along the path as given and along the
    // path with links resolved) is world-writable without the sticky bit. A sticky folder such
    // as /tmp is accepted, since others cannot rename or delete what they do not own there.
    // Checked before dlopen, which runs the object's constructors. A path that cannot be
    // examined is left for dlopen to report.
    static std::string writable_by_others(const std::filesystem::path &file);
    static constexpr const char *kWritableHint =
        "remove write permission for others (chmod o-w), or set [security] allow_writable_plugins = true";
    // The first `folders[i] / file_name` that exists.
    static std::filesystem::path find_in(const std::vector<std::filesystem::path> &folders,
                                         const std::string &file_name);
    // "a, b": the folders of `folders` that exist, for a "not found" message. A search path
    // also holds the build tree's and the install's candidates, and listing the ones absent
    // on this machine only misleads; "" when none exists.
    static std::string existing_folders(const std::vector<std::filesystem::path> &folders);

private:
    void *handle_ = nullptr;
    std::filesystem::path path_;
    std::string error_;
};

} // namespace tidal

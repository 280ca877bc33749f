#include "config/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "config/toml_limits.h"
#include "status/error.h"

namespace tidal {
namespace {

const char *file_type(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    ~FileDescriptor()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    FileDescriptor(const FileDescriptor &) = delete;
    FileDescriptor &operator=(const FileDescriptor &) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

} // namespace

std::string read_text_file(const std::filesystem::path &path, std::string_view what,
                           const std::string &hint)
{
    const std::string who = std::string(what) + " '" + path.string() + "'";
    // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, before fstat can
    // tell what it is. It has no effect on regular files.
    FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0)
        throw Error(TIDAL_ERROR_CONFIG, "cannot read " + who + ": " + std::strerror(errno), hint);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw Error(TIDAL_ERROR_CONFIG, "cannot read " + who + ": " + std::strerror(errno), hint);
    if (!S_ISREG(st.st_mode))
        throw Error(TIDAL_ERROR_CONFIG, who + " is " + file_type(st.st_mode) + ", not a regular file",
                    "name a TOML file; to pass generated text use tidal_context_create_from_string");

    // The size from fstat is only a guide (the file may grow, /proc files report 0): the
    // read itself stops one byte past the limit.
    const size_t cap = TomlLimits::kMaxBytes + 1;
    std::string text;
    text.resize(cap);
    size_t got = 0;
    while (got < cap) {
        const ssize_t n = ::read(fd.get(), text.data() + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error(TIDAL_ERROR_CONFIG, "cannot read " + who + ": " + std::strerror(errno), hint);
        if (n == 0)
            break;
        got += static_cast<size_t>(n);
    }
    text.resize(got);
    return text;
}

} // namespace tidal

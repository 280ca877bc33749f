// What both fuzz targets share: a clean environment, a private working folder, and the
// checks that turn a wrong status into a crash libFuzzer (or the replay) reports.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "tidal/tidal.h"

namespace fuzz {

// A finding: print what broke and abort, so libFuzzer saves the input and the replay fails.
[[noreturn]] inline void finding(const char *what, tidal_status status)
{
    std::fprintf(stderr, "FUZZ FINDING: %s: %s (%d): %s\n", what, tidal_status_name(status),
                 static_cast<int>(status), tidal_last_error());
    std::abort();
}

// Every status must be a documented number, never INTERNAL, and a failure must say why.
inline tidal_status checked(const char *what, tidal_status status)
{
    const int n = static_cast<int>(status);
    if (n < TIDAL_OK || n > TIDAL_ERROR_BUFFER_TOO_SMALL)
        finding(what, status);
    if (status == TIDAL_ERROR_INTERNAL)
        finding(what, status);
    if (status != TIDAL_OK && tidal_last_error()[0] == '\0')
        finding("failure without a message", status);
    return status;
}

// Like `checked`, and the status must be one of `allowed` (a bit per status number).
inline tidal_status expect(const char *what, tidal_status status, unsigned allowed)
{
    checked(what, status);
    if (!(allowed & (1u << static_cast<unsigned>(status))))
        finding(what, status);
    return status;
}

constexpr unsigned bit(tidal_status s) { return 1u << static_cast<unsigned>(s); }

// Once per process: no developer setting leaks in, the built-in policies are found however
// the target was linked, logging stays quiet, and relative paths in a fuzzed configuration
// land in an empty private folder (removed at exit).
inline void isolate_process()
{
    for (const char *name : {"TIDAL_CONFIG", "TIDAL_RUNTIME", "TIDAL_RUNTIME_PATH",
                             "TIDAL_SIM_DEVICES", "TIDAL_SIM_CAPACITY", "TIDAL_SIM_XNACK"})
        unsetenv(name);
    setenv("TIDAL_POLICY_PATH", TIDAL_FUZZ_POLICY_PATH, 1);
    setenv("TIDAL_LOG_LEVEL", "error", 0);
    static std::string folder = (std::filesystem::temp_directory_path() / "tidal-fuzz-XXXXXX").string();
    if (mkdtemp(folder.data()) == nullptr || chdir(folder.c_str()) != 0) {
        std::perror("tidal fuzz: private folder");
        std::abort();
    }
    std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(folder, ec);
    });
}

} // namespace fuzz

// Fuzz target: the configuration loader, whole files, through the public C API.
// Text without NUL bytes goes through tidal_context_create_from_string; text with them is
// written to a file for tidal_context_create_from_file (what `tidal config check` calls), so
// both entry points see arbitrary bytes. A context that loads must work: its description
// must load again, and one allocation through its policy chain must behave.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"

namespace {

// The loader refuses text over 1 MiB; inputs a little beyond that still reach that refusal,
// larger ones would only measure how long big inputs take.
constexpr size_t kMaxInput = (size_t{1} << 20) + 4096;

bool skipped(std::string_view text)
{
    if (text.size() > kMaxInput)
        return true;
    // Paths the harness must never hand over: a terminal, a pipe or /proc's endless files
    // would block the fuzzer, or measure the host, if some key other than the configuration
    // file itself named them (configuration and profile files are read as regular files only).
    return text.find("/dev/") != std::string_view::npos || text.find("/proc/") != std::string_view::npos;
}

constexpr unsigned kCreateStatuses = fuzz::bit(TIDAL_OK) | fuzz::bit(TIDAL_ERROR_CONFIG) |
                                     fuzz::bit(TIDAL_ERROR_PLUGIN) | fuzz::bit(TIDAL_ERROR_NO_DEVICE) |
                                     fuzz::bit(TIDAL_ERROR_RUNTIME) | fuzz::bit(TIDAL_ERROR_OUT_OF_MEMORY) |
                                     // not in tidal.h's list, but clear: [pool] backend =
                                     // "vendor" on a runtime without a stream-ordered pool
                                     fuzz::bit(TIDAL_ERROR_NOT_SUPPORTED);

tidal_context *create(std::string_view text)
{
    tidal_context *ctx = nullptr;
    tidal_status s;
    if (text.find('\0') == std::string_view::npos) {
        const std::string copy(text);
        s = tidal_context_create_from_string(copy.c_str(), &ctx);
    } else {
        // In the private folder isolate_process() made the working directory.
        FILE *f = std::fopen("fuzz-config.toml", "wb");
        if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
            std::perror("tidal fuzz: fuzz-config.toml");
            std::abort();
        }
        s = tidal_context_create_from_file("fuzz-config.toml", &ctx);
    }
    fuzz::expect("tidal_context_create_from_*", s, kCreateStatuses);
    if ((s == TIDAL_OK) != (ctx != nullptr))
        fuzz::finding("context pointer disagrees with the status", s);
    return ctx;
}

std::string describe(tidal_context *ctx)
{
    size_t needed = 0;
    fuzz::expect("tidal_config_describe (size)", tidal_config_describe(ctx, nullptr, 0, &needed),
                 fuzz::bit(TIDAL_ERROR_BUFFER_TOO_SMALL) | fuzz::bit(TIDAL_ERROR_INVALID_ARGUMENT) |
                     fuzz::bit(TIDAL_OK));
    if (needed == 0)
        fuzz::finding("tidal_config_describe needs 0 bytes", TIDAL_OK);
    std::vector<char> buf(needed);
    fuzz::expect("tidal_config_describe", tidal_config_describe(ctx, buf.data(), buf.size(), &needed),
                 fuzz::bit(TIDAL_OK));
    return std::string(buf.data());
}

// What a loaded configuration must support.
void exercise(tidal_context *ctx)
{
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    fuzz::expect("tidal_system_info_get", tidal_system_info_get(ctx, &sys), fuzz::bit(TIDAL_OK));
    if (sys.device_count < 1)
        fuzz::finding("a context without devices", TIDAL_OK);
    for (int32_t d = 0; d < sys.device_count; ++d) {
        tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
        fuzz::expect("tidal_device_info_get", tidal_device_info_get(ctx, d, &info), fuzz::bit(TIDAL_OK));
    }

    // One small allocation through the configured chain: a policy may refuse or fail it, the
    // fault injector may fail it, but a pointer it returns must be usable and freeable.
    void *p = nullptr;
    const tidal_status s = fuzz::checked("tidal_alloc", tidal_alloc(ctx, 4096, nullptr, &p));
    if (s == TIDAL_OK) {
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        fuzz::expect("tidal_pointer_query", tidal_pointer_query(ctx, p, &info), fuzz::bit(TIDAL_OK));
        if (info.base != p || info.size != 4096)
            fuzz::finding("tidal_pointer_query disagrees with tidal_alloc", TIDAL_OK);
        fuzz::checked("tidal_free", tidal_free(ctx, p));
    } else if (p != nullptr) {
        fuzz::finding("failed tidal_alloc left *out set", s);
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::isolate_process();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    if (skipped(text))
        return -1; // libFuzzer keeps rejected inputs out of the corpus
    tidal_context *ctx = create(text);
    if (ctx == nullptr)
        return 0;
    exercise(ctx);
    // The resolved settings, described as TOML, are a configuration the loader must accept.
    const std::string described = describe(ctx);
    fuzz::expect("tidal_context_destroy", tidal_context_destroy(ctx), fuzz::bit(TIDAL_OK));
    tidal_context *again = nullptr;
    const tidal_status s = tidal_context_create_from_string(described.c_str(), &again);
    if (s == TIDAL_ERROR_CONFIG) {
        std::fprintf(stderr, "described configuration:\n%s\n", described.c_str());
        fuzz::finding("tidal_config_describe's text does not load", s);
    }
    fuzz::expect("tidal_context_create_from_string (described)", s, kCreateStatuses);
    fuzz::expect("tidal_context_destroy", tidal_context_destroy(again), fuzz::bit(TIDAL_OK));
    return 0;
}

#include "hip_xnack.h"

namespace tidal::hip {

namespace {

enum class EnvXnack { on, off, unset, other };

EnvXnack parse_env(const char *value) noexcept
{
    if (value == nullptr)
        return EnvXnack::unset;
    const std::string_view v(value);
    if (v == "1")
        return EnvXnack::on;
    if (v == "0")
        return EnvXnack::off;
    return EnvXnack::other; // ROCr only honours 0/1; anything else leaves its default
}

std::string quoted_arch(std::string_view gcn_arch)
{
    return "gcnArchName '" + std::string(gcn_arch) + "'";
}

std::string pageable_text(int pageable)
{
    return pageable < 0 ? std::string("pageableMemoryAccess unreadable")
                        : "pageableMemoryAccess=" + std::to_string(pageable);
}

// Appended when the process asked for something the arch suffix shows it did not get.
std::string env_note(EnvXnack env, XnackState state)
{
    if (env == EnvXnack::on && state == XnackState::off)
        return "; HSA_XNACK=1 was asked but not granted (gfx906/gfx908 and XNACK-less GPUs "
               "cannot enable it)";
    if (env == EnvXnack::off && state == XnackState::on)
        return "; HSA_XNACK=0 was set but the runtime reports XNACK on";
    return {};
}

} // namespace

ArchXnack arch_xnack_feature(std::string_view gcn_arch) noexcept
{
    // "gfx90a:sramecc+:xnack+": the processor, then ':'-separated features in any order.
    std::size_t colon = gcn_arch.find(':');
    while (colon != std::string_view::npos) {
        const std::size_t begin = colon + 1;
        colon = gcn_arch.find(':', begin);
        const std::string_view token = gcn_arch.substr(
            begin, colon == std::string_view::npos ? std::string_view::npos : colon - begin);
        if (token == "xnack+")
            return ArchXnack::plus;
        if (token == "xnack-")
            return ArchXnack::minus;
    }
    return ArchXnack::absent;
}

XnackVerdict classify_xnack(std::string_view gcn_arch, int pageable_memory_access,
                            const char *hsa_xnack_env)
{
    const EnvXnack env = parse_env(hsa_xnack_env);
    const int pageable = pageable_memory_access < 0 ? -1 : (pageable_memory_access != 0 ? 1 : 0);
    XnackVerdict verdict;

    switch (arch_xnack_feature(gcn_arch)) {
    case ArchXnack::plus:
        if (pageable == 0) {
            verdict.state = XnackState::unknown;
            verdict.reason = quoted_arch(gcn_arch) + " says xnack+ but pageableMemoryAccess=0 "
                             "(another GPU has XNACK off, or the kernel lacks HMM): migration "
                             "on fault not relied on";
        } else {
            verdict.state = XnackState::on;
            verdict.reason = quoted_arch(gcn_arch) + " ends in xnack+, " + pageable_text(pageable);
        }
        break;
    case ArchXnack::minus:
        verdict.state = XnackState::off;
        verdict.reason = quoted_arch(gcn_arch) + " says xnack-";
        if (pageable == 1)
            verdict.reason += " (pageableMemoryAccess=1 disagrees; the device cannot retry faults)";
        break;
    case ArchXnack::absent:
        if (pageable == 1) {
            verdict.state = XnackState::on;
            verdict.reason = quoted_arch(gcn_arch) + " has no xnack feature, pageableMemoryAccess=1";
        } else if (pageable == 0) {
            verdict.state = XnackState::off;
            verdict.reason = quoted_arch(gcn_arch) + " has no xnack feature, pageableMemoryAccess=0";
        } else if (env == EnvXnack::off) {
            verdict.state = XnackState::off;
            verdict.reason = quoted_arch(gcn_arch) + " has no xnack feature, " +
                             pageable_text(pageable) + ", HSA_XNACK=0";
        } else {
            verdict.state = XnackState::unknown;
            verdict.reason = quoted_arch(gcn_arch) + " has no xnack feature, " +
                             pageable_text(pageable) +
                             (env == EnvXnack::on ? ", HSA_XNACK=1 unconfirmed"
                                                  : ", nothing confirms XNACK");
        }
        break;
    }
    if (env == EnvXnack::other)
        verdict.reason += "; HSA_XNACK='" + std::string(hsa_xnack_env) + "' is neither 0 nor 1";
    verdict.reason += env_note(env, verdict.state);
    return verdict;
}

} // namespace tidal::hip

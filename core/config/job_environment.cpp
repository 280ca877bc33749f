#include "config/job_environment.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "status/error.h"

namespace tidal {

namespace {

constexpr std::array<const char *, 4> kLocalRankVariables = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                                              "SLURM_LOCALID", "LOCAL_RANK"};
constexpr std::array<const char *, 4> kRankVariables = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"};

std::optional<JobEnvironment::Rank> first_set(const std::array<const char *, 4> &variables)
{
    for (const char *name : variables) {
        const char *v = std::getenv(name);
        if (!v || !*v)
            continue;
        const std::string_view text(v);
        int64_t n = -1;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        const bool valid = ec == std::errc() && end == text.data() + text.size() && n >= 0 && n <= INT32_MAX;
        return JobEnvironment::Rank{valid ? static_cast<int32_t>(n) : -1, name, std::string(text)};
    }
    return std::nullopt;
}

// The rank's value; a variable that holds no rank is an error naming it.
int32_t value_of(const JobEnvironment::Rank &rank, const char *what)
{
    if (rank.value < 0)
        throw Error(TIDAL_ERROR_CONFIG,
                    fmt::format("environment variable {}=\"{}\" is no {} (a whole number from 0)", rank.variable,
                                rank.text, what),
                    "fix the launcher's environment, or unset " + std::string(rank.variable));
    return rank.value;
}

} // namespace

JobEnvironment JobEnvironment::read()
{
    JobEnvironment job;
    job.local_rank_ = first_set(kLocalRankVariables);
    job.rank_ = first_set(kRankVariables);
    return job;
}

int32_t JobEnvironment::device_for(int32_t device_count) const
{
    if (!local_rank_ || device_count <= 0)
        return 0;
    return value_of(*local_rank_, "local rank") % device_count;
}

const char *JobEnvironment::local_rank_variables() noexcept
{
    return "OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, LOCAL_RANK";
}

std::string JobEnvironment::expand(std::string_view pattern) const
{
    std::string out;
    out.reserve(pattern.size() + 16);
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%') {
            out += pattern[i];
            continue;
        }
        const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
        if (next == 'r')
            out += std::to_string(rank_ ? value_of(*rank_, "rank") : 0);
        else if (next == 'p')
            out += std::to_string(static_cast<long long>(getpid()));
        else if (next == '%')
            out += '%';
        else
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                        fmt::format("file name \"{}\" has {} at byte {}", pattern,
                                    next ? fmt::format("an unknown %{}", next) : std::string("a lone % at its end"), i),
                        "use %r for the rank, %p for the process id, %% for a percent sign");
        ++i;
    }
    return out;
}

} // namespace tidal

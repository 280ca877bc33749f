// Where this process sits in a parallel job (MPI, Slurm, torchrun), read from the environment
// alone: tidal links no MPI library, and every launcher already exports the ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tidal {

class JobEnvironment {
public:
    struct Rank {
        int32_t value = -1;   // -1 when the variable's text is no rank
        const char *variable; // the environment variable it came from
        std::string text;     // its text, for messages
    };

    // The node-local rank, from the first of OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
    // SLURM_LOCALID, LOCAL_RANK that is set; the job-wide rank, from the first of
    // OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, RANK. Reading never fails: a variable
    // that is set but is no whole number from 0 is an error only where its value is used
    // (device_for, expand), since RANK may belong to some other tool.
    static JobEnvironment read();

    const std::optional<Rank> &local_rank() const noexcept { return local_rank_; }
    const std::optional<Rank> &rank() const noexcept { return rank_; }

    // The device `device_selection = "local-rank"` picks: the local rank round-robin over the
    // visible devices, 0 without a local rank. A local rank that is no number is
    // TIDAL_ERROR_CONFIG naming the variable: a launcher that exports garbage would otherwise
    // put every rank on one GPU without a word.
    int32_t device_for(int32_t device_count) const;

    // A file name with %r (the rank; 0 outside a job), %p (the process id) and %% (a percent
    // sign) expanded; any other % sequence is TIDAL_ERROR_INVALID_ARGUMENT, so a typo never
    // makes every rank write one file.
    std::string expand(std::string_view pattern) const;

    // Names the variables looked at, for messages ("OMPI_COMM_WORLD_LOCAL_RANK, ...").
    static const char *local_rank_variables() noexcept;

private:
    std::optional<Rank> local_rank_;
    std::optional<Rank> rank_;
};

} // namespace tidal

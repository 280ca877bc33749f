// Runs the validation kernels (tidal_check_run) on a device: checks the request against the
// registry, runs the runtime's kernel entry point on a per-device stream, times it with
// runtime events. The kernels themselves live in kernels/ (GPU) and the simulated device.
#pragma once

#include <mutex>
#include <vector>

#include "registry/allocation_registry.h"
#include "runtime/runtime.h"

namespace tidal {

class CheckRunner {
public:
    CheckRunner(Runtime &runtime, const AllocationRegistry &registry) : runtime_(runtime), registry_(registry) {}
    ~CheckRunner();
    CheckRunner(const CheckRunner &) = delete;
    CheckRunner &operator=(const CheckRunner &) = delete;

    // Fills check.result and check.elapsed_ms; throws tidal::Error.
    void run(tidal_check &check);

private:
    struct Lane { // one per device: where checks run and how they are timed
        void *stream = nullptr;
        void *start = nullptr;
        void *end = nullptr;
        bool ready = false;
    };
    void validate(const tidal_check &check) const;
    void check_operand(const void *p, size_t size, const char *name, int32_t device, bool kernel) const;
    void validate_atomic_set(const tidal_check &check) const;
    Lane &lane(int32_t device);
    // The atomic set: set the words, run the kernel (and host threads), read back, check.
    void run_atomic_set(tidal_check &check, Lane &lane, void *stream, const CallDescription &what);
    void settle(void *stream, int32_t device, const CallDescription &what);
    void launch(const tidal_check &check, void *stream, uint64_t *mismatches, CallDescription what);

    Runtime &runtime_;
    const AllocationRegistry &registry_;
    std::mutex mutex_; // guards lanes_ creation; runs on one lane are serialised by it too
    std::vector<Lane> lanes_;
};

} // namespace tidal

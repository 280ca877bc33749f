// Re-issues a trace's calls on one context through the public API (the tool's only way in):
// allocations get new addresses, and every recorded address -- a base, an interior pointer,
// a stream -- is mapped to the new one before a call uses it. Host memory the program owned
// (the far end of a copy) is stood in for by host buffers of the same extent.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <tidal/tidal.h>

#include "trace_file.h"

namespace tidal_tool {

// One allocation as the replayed context placed it.
struct ReplayAllocation {
    size_t line = 0;
    std::string tag;
    uint64_t size = 0;
    std::string kind;   // "" when it failed
    int32_t device = 0;
    std::string policy;
};

// Device memory at one moment of the replay: bytes of device kinds by tag, and managed
// bytes the scheduler holds resident (all tags together: the API reports them per device).
struct MemorySample {
    double seconds = 0; // on the replay's clock, from its start
    std::map<std::string, uint64_t> bytes_by_tag;
};

struct ReplayFigures {
    std::string config;
    double simulated_seconds = 0;
    uint64_t migrated_bytes = 0;  // moved to devices by declarations and prefetches
    uint64_t evicted_bytes = 0;   // moved back by eviction
    uint64_t evictions = 0;
    uint64_t peak_device_bytes = 0;
    uint64_t calls = 0;
    uint64_t failures = 0;          // calls that failed in the replay
    uint64_t recorded_failures = 0; // calls that had failed when recorded
    uint64_t skipped = 0;           // calls on an allocation that failed in the replay
    std::vector<std::string> failure_lines; // the first few, "LINE: call: STATUS: message"
    std::vector<ReplayAllocation> allocations;
    std::vector<MemorySample> timeline;
};

// A live allocation of the replay, by its recorded base.
struct ReplayedBlock {
    uint64_t recorded = 0;
    void *ptr = nullptr;
    uint64_t size = 0;
    std::string tag;
    tidal_kind kind = TIDAL_KIND_AUTO;
    int32_t device = 0;
};

class TraceReplayer;

// What `tidal doctor` watches a replay with: called around each record.
class ReplayObserver {
public:
    virtual ~ReplayObserver() = default;
    virtual void before(const TraceRecord &, TraceReplayer &) {}
    virtual void after(const TraceRecord &, tidal_status, TraceReplayer &) {}
};

class TraceReplayer {
public:
    TraceReplayer(const Trace &trace, tidal_context *ctx) : trace_(trace), ctx_(ctx) {}
    ~TraceReplayer();

    ReplayFigures run(ReplayObserver *observer = nullptr);

    tidal_context *context() const { return ctx_; }
    // The live allocation holding a recorded address, or nullptr.
    const ReplayedBlock *owner(uint64_t recorded) const;
    // A recorded address in the replay: inside an allocation, else in stand-in host memory
    // of at least `extent` bytes from it.
    void *map(uint64_t recorded, uint64_t extent);
    // Device time of the last check_run replayed (seconds).
    double last_check_seconds() const { return last_check_seconds_; }

private:
    tidal_status replay(const TraceRecord &r);
    tidal_status alloc(const TraceRecord &r);
    tidal_status check(const TraceRecord &r);
    void *stream(uint64_t recorded, int32_t device = 0);
    void sample(ReplayFigures &f, double start);

    const Trace &trace_;
    tidal_context *ctx_;
    std::map<uint64_t, ReplayedBlock> blocks_;            // by recorded base
    std::map<uint64_t, std::vector<char>> host_;          // stand-ins, by recorded address
    std::map<uint64_t, void *> streams_;                  // recorded handle -> replay's
    std::vector<void *> created_streams_;
    ReplayFigures *figures_ = nullptr;
    double last_check_seconds_ = 0;
};

// A context on the simulated device for replaying `trace` under `config` (a file; "" for the
// built-in defaults): TIDAL_RUNTIME=sim, at least the trace's device count, `profile` (a file
// or built-in name; "" keeps the configuration's), and no trace of its own. NULL with
// `*error` set when the configuration is refused.
tidal_context *open_replay_context(const std::string &config, const Trace &trace, const std::string &profile,
                                   std::string *error);

// The tidal_check_kind a trace names ("touch_read", ...); TIDAL_CHECK_FORCE_32BIT for none.
tidal_check_kind check_kind_from_name(const std::string &name);
// tidal_kind for a name tidal_kind_name gives; TIDAL_KIND_COUNT for none.
tidal_kind kind_from_name(const std::string &name);

} // namespace tidal_tool

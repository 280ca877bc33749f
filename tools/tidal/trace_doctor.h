// `tidal doctor`: the seed's three performance symptoms, and host/device alternation, found
// per buffer while a trace replays on the simulated device, each with its fix written as a
// `rules` entry or a declaration to add.
//   first-access latency  the first kernel on a managed buffer spends most of its time in page
//                         faults and nothing declared or prefetched it first -> declare it;
//   fault-bound           later kernels keep paying faults or link reads -> preferred-location
//                         advice;
//   thrashing             tidal evicted the buffer and moved it back again and again, the
//                         program between untouched -> smaller batches / another order;
//   alternation           the buffer moves host -> device -> host ... -> declare ahead, or keep
//                         it where both can reach it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace_replayer.h"

namespace tidal_tool {

struct Finding {
    std::string symptom; // "first-access-latency", "thrashing", "fault-bound", "alternation"
    std::string tag;
    uint64_t size = 0;
    size_t line = 0;     // where it shows first in the trace (0 from a snapshot, which has no lines)
    std::string evidence;
    std::string fix;     // a rules entry or a declaration, ready to paste
};

// The name and the fixes, one statement each, shared with the diagnosis of a statistics
// snapshot (snapshot_doctor.h).
std::string name_of(const std::string &tag); // "(untagged)" for ""
// A declaration before the first kernel (first-access latency); `why` heads it as a comment.
std::string fix_declare_first(const std::string &tag, uint64_t size, int32_t device, const std::string &why);
// Preferred-location advice as a rules entry (fault-bound kernels).
std::string fix_preferred_location(const std::string &tag);
// Batches that fit `budget` (0: none known), or a budget that holds the `cycle_bytes` that thrash.
std::string fix_thrashing(const std::string &tag, uint64_t budget, uint64_t cycle_bytes);
// A lookahead declaration on `device`, or pinned memory (host/device alternation).
std::string fix_alternation(const std::string &tag, uint64_t size, int32_t device);

class TraceDoctor : public ReplayObserver {
public:
    void before(const TraceRecord &r, TraceReplayer &replayer) override;
    void after(const TraceRecord &r, tidal_status status, TraceReplayer &replayer) override;
    std::vector<Finding> findings() const;

private:
    struct Watch {
        std::string tag;
        uint64_t size = 0;
        size_t line = 0;
        bool managed = false;
        bool prepared = false;       // declared or prefetched to a device before any kernel
        int kernels = 0;
        bool first_slow = false;
        double first_overhead = 0, first_elapsed = 0;
        size_t first_line = 0;
        int later_slow = 0;
        double later_overhead = 0, later_elapsed = 0;
        int resident_on = -3;        // device tidal last made it resident on (-3: none)
        bool host_since = false;     // the program moved it to the host since
        int remigrations = 0;        // evicted by tidal, then declared again
        size_t remigration_line = 0;
        int side = 0;                // 1 host, 2 device: the last side that used it
        int switches = 0;
        size_t switch_line = 0;
    };
    Watch *watch(uint64_t recorded, const TraceReplayer &replayer);
    void use(Watch &w, bool device, size_t line);
    double baseline(const TraceRecord &r, TraceReplayer &replayer);
    int32_t last_prefetch(TraceReplayer &replayer, uint64_t recorded, uint64_t size);

    std::vector<Watch> watches_;                 // every allocation, in order
    std::map<uint64_t, size_t> live_;            // recorded base -> watches_ index
    std::map<std::string, double> baselines_;    // "kind/size/device" -> seconds on device memory
    uint64_t budget_ = 0;
    std::vector<int32_t> before_declare_;        // last_prefetch of each item, before the call
};

} // namespace tidal_tool

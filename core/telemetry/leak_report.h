// The allocations still live when a context is destroyed, in two forms: lines for the log and
// a JSON array for the statistics snapshot. Built before the context frees them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "registry/allocation_record.h"

namespace tidal::telemetry {

class CallSites;
class JsonWriter;

class LeakReport {
public:
    // `live` in the order the report lists them; `sites` may be nullptr (no stacks were kept).
    LeakReport(std::vector<AllocationRecord> live, const CallSites *sites);

    bool empty() const noexcept { return leaks_.empty(); }
    const std::vector<AllocationRecord> &records() const noexcept { return leaks_; }
    // A summary line, then one line per leak (the first `limit`; its call site indented below
    // it), then "... and N more".
    std::vector<std::string> text(size_t limit) const;
    void write_json(JsonWriter &w) const;

private:
    struct Leak {
        std::vector<std::string> call_site; // empty without leak_backtrace
    };
    std::vector<AllocationRecord> leaks_;
    std::vector<Leak> sites_;             // parallel to leaks_
};

} // namespace tidal::telemetry

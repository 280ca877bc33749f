// One statistics snapshot of a context: what is live (by kind and device, and by tag), what the
// pools and the migration scheduler counted, the errors returned, and (at destroy) the leaks.
// Plain data gathered by Context from the counters that already exist; this only formats it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pool/pool_stats.h"
#include "runtime/runtime_contract.h"
#include "telemetry/leak_report.h"
#include "tidal/tidal.h"

namespace tidal::telemetry {

// Bytes and allocations live now, and the highest of each that a snapshot has seen.
struct Usage {
    uint64_t bytes = 0;
    uint64_t count = 0;
    uint64_t peak_bytes = 0;
    uint64_t peak_count = 0;
};

// Demand paging of one tag group's managed memory, as the runtime counted it (the simulated
// device only), with the largest managed allocation counted: what the counts compare against.
struct TagPaging {
    tidal_rt_paging_stats counts{};
    uint64_t largest_bytes = 0;
};

struct StatsSnapshot {
    struct KindRow {
        tidal_kind kind = TIDAL_KIND_AUTO;
        int32_t device = TIDAL_DEVICE_HOST;
        Usage usage;
    };
    struct TagRow {
        std::string tag; // the group: the tag's first tag_depth parts ("" = untagged)
        Usage usage;
        std::optional<TagPaging> paging; // unknown on a runtime that does not count paging
    };
    struct PoolRow {
        tidal_kind kind = TIDAL_KIND_AUTO;
        int32_t device = 0;
        pool::PoolStats stats;
    };
    struct DeviceRow {
        int32_t device = 0;
        tidal_migration_stats migration = TIDAL_MIGRATION_STATS_INIT;
        std::optional<tidal_rt_paging_stats> paging; // unknown on a runtime that does not count paging
    };

    std::string runtime;
    uint32_t tag_depth = 0;
    Usage live;
    std::vector<KindRow> kinds;
    std::vector<TagRow> tags;
    std::vector<PoolRow> pools;
    std::vector<DeviceRow> devices;
    std::vector<std::pair<tidal_status, uint64_t>> errors; // statuses returned at least once
    const LeakReport *leaks = nullptr;                     // set at destroy only

    // The documented JSON form (docs/stats.schema.json), one line and a newline.
    std::string to_json() const;
};

} // namespace tidal::telemetry

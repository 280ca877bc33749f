#include "telemetry/stats_snapshot.h"

#include "telemetry/json_writer.h"

namespace tidal::telemetry {
namespace {

void write_usage(JsonWriter &w, const Usage &u)
{
    w.field("bytes", u.bytes).field("count", u.count).field("peak_bytes", u.peak_bytes).field("peak_count", u.peak_count);
}

void write_pair(JsonWriter &w, const char *name, const char *unit, uint64_t bytes, uint64_t calls)
{
    w.key(name).begin_object().field("bytes", bytes).field(unit, calls).end_object();
}

// Page faults by where the page came from, kernel reads over the link, and prefetch moves;
// null where the runtime counts none (a GPU: no made-up 0).
void write_paging(JsonWriter &w, const tidal_rt_paging_stats *p, const uint64_t *largest)
{
    w.key("faults");
    if (!p) {
        w.null();
        return;
    }
    w.begin_object();
    w.field("count", p->faults_from_host + p->faults_from_peer);
    w.field("bytes", p->fault_bytes_from_host + p->fault_bytes_from_peer);
    write_pair(w, "from_host", "count", p->fault_bytes_from_host, p->faults_from_host);
    write_pair(w, "from_peer", "count", p->fault_bytes_from_peer, p->faults_from_peer);
    w.field("link_bytes", p->link_bytes).field("link_page_bytes", p->link_page_bytes);
    w.field("prefetched_to_device_bytes", p->moved_to_device_bytes);
    w.field("prefetched_to_host_bytes", p->moved_to_host_bytes);
    if (largest)
        w.field("largest_allocation_bytes", *largest);
    w.end_object();
}

void write_device(JsonWriter &w, const StatsSnapshot::DeviceRow &d)
{
    const tidal_migration_stats &m = d.migration;
    w.begin_object().field("device", d.device).field("budget", m.budget);
    w.field("resident_bytes", m.resident_bytes).field("resident_peak_bytes", m.resident_high_water);
    w.field("protected_bytes", m.protected_bytes);
    w.key("migrations").begin_object();
    write_pair(w, "host_to_device", "calls", m.migrated_bytes, m.migration_calls);
    write_pair(w, "device_to_host", "calls", m.evicted_bytes, m.evictions);
    write_pair(w, "elastic_in", "chunks", m.elastic_copied_in, m.elastic_restores);
    write_pair(w, "elastic_out", "chunks", m.elastic_copied_out, m.elastic_offloads);
    w.end_object();
    w.key("prefetches").begin_object();
    w.field("declared_ranges", m.declared_ranges).field("runtime_calls", m.migration_calls);
    w.field("resident_hit_bytes", m.resident_hits).field("noops", m.noops).field("budget_refusals", m.budget_refusals);
    w.end_object();
    w.key("evictions").begin_object().field("count", m.evictions).field("bytes", m.evicted_bytes).end_object();
    w.key("drops").begin_object().field("bytes", m.dropped_bytes).field("elastic_discarded_bytes", m.elastic_discarded);
    w.end_object();
    write_paging(w, d.paging ? &*d.paging : nullptr, nullptr);
    w.end_object();
}

void write_pool(JsonWriter &w, const StatsSnapshot::PoolRow &p)
{
    const pool::PoolStats &s = p.stats;
    w.begin_object().field("kind", tidal_kind_name(p.kind)).field("device", p.device);
    w.field("reserved_bytes", s.reserved_bytes).field("reserved_peak_bytes", s.reserved_high_water);
    w.field("in_use_bytes", s.in_use_bytes).field("in_use_peak_bytes", s.in_use_high_water);
    w.field("allocations", s.allocations).field("frees", s.frees).field("cache_hits", s.cache_hits);
    w.field("runtime_allocations", s.upstream_acquires).field("runtime_frees", s.upstream_releases);
    w.field("fragmentation", s.fragmentation);
    w.end_object();
}

} // namespace

std::string StatsSnapshot::to_json() const
{
    JsonWriter w;
    w.begin_object();
    w.field("schema", "tidal-stats/1").field("runtime", runtime).field("tag_depth", tag_depth);
    w.key("live").begin_object();
    write_usage(w, live);
    w.end_object();
    w.key("by_kind").begin_array();
    for (const KindRow &k : kinds) {
        w.begin_object().field("kind", tidal_kind_name(k.kind)).field("device", k.device);
        write_usage(w, k.usage);
        w.end_object();
    }
    w.end_array();
    w.key("by_tag").begin_array();
    for (const TagRow &t : tags) {
        w.begin_object().field("tag", t.tag);
        write_usage(w, t.usage);
        write_paging(w, t.paging ? &t.paging->counts : nullptr, t.paging ? &t.paging->largest_bytes : nullptr);
        w.end_object();
    }
    w.end_array();
    w.key("pools").begin_array();
    for (const PoolRow &p : pools)
        write_pool(w, p);
    w.end_array();
    w.key("devices").begin_array();
    for (const DeviceRow &d : devices)
        write_device(w, d);
    w.end_array();
    w.key("errors").begin_object();
    for (const auto &[status, count] : errors)
        w.field(tidal_status_name(status), count);
    w.end_object();
    if (leaks) {
        w.key("leaks");
        leaks->write_json(w);
    }
    w.end_object();
    return w.text() + "\n";
}

} // namespace tidal::telemetry

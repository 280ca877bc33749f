// Elastic chunks as the migration scheduler moves them under tidal_declare and a device budget
// (migration/chunk_residency.h). The bookkeeping happens under the ElasticSpace's lock when the
// scheduler books a move; the runtime calls (copies home, unmap, map, copies in) run later on
// the device's migration worker without that lock, and put the chunk table right if they fail.
#pragma once

#include "elastic/elastic_space.h"
#include "migration/chunk_residency.h"

namespace tidal::elastic {

class ElasticResidency final : public ChunkResidency {
public:
    explicit ElasticResidency(ElasticSpace &space) : space_(space) {}

    std::vector<ResidencyChunk> chunks(const void *base, const void *ptr, size_t size) const override;
    std::vector<ResidencyChunk> resident(int32_t device) const override;
    uint64_t resident_bytes(int32_t device) const override;
    std::function<void()> move(int32_t device, const std::vector<uintptr_t> &victims, const std::vector<ChunkNeed> &needs,
                               void *in_stream, void *out_stream) override;

private:
    struct MovePlan;
    // The runtime calls of a booked move, on the worker; puts the table right when one fails.
    static void carry_out(ElasticSpace &s, MovePlan &p, int32_t device, void *in_stream, void *out_stream);
    static void repair(ElasticSpace &s, MovePlan &p, int32_t device) noexcept;

    ElasticSpace &space_;
};

} // namespace tidal::elastic

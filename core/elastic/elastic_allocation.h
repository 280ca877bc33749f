// One elastic allocation: its reservation, its chunks and its host home (made on first need).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "elastic/chunk_table.h"
#include "elastic/host_home.h"
#include "tidal/tidal.h"

namespace tidal::elastic {

struct ElasticAllocation {
    ElasticAllocation(char *base_, size_t size_, size_t reserved_, size_t chunk_size, int32_t device_)
        : base(base_), size(size_), reserved(reserved_), device(device_), chunks(reserved_, chunk_size)
    {
    }

    char *base;      // the reservation: what the caller got
    size_t size;     // what the caller asked for
    size_t reserved; // size rounded up to the granularity
    int32_t device;
    char tag[TIDAL_TAG_MAX] = {};
    ChunkTable chunks;
    std::unique_ptr<HostHome> home;
};

} // namespace tidal::elastic

#include "elastic/chunk_table.h"

#include <algorithm>

namespace tidal::elastic {

ChunkTable::ChunkTable(size_t reserved, size_t chunk_size) : chunk_size_(std::min(chunk_size, reserved))
{
    chunks_.reserve((reserved + chunk_size_ - 1) / chunk_size_);
    for (size_t offset = 0; offset < reserved; offset += chunk_size_) {
        Chunk c;
        c.offset = offset;
        c.size = std::min(chunk_size_, reserved - offset);
        chunks_.push_back(c);
    }
}

void ChunkTable::span(size_t offset, size_t size, size_t *first, size_t *last) const noexcept
{
    *first = index_of(offset);
    *last = index_of(offset + size - 1) + 1;
}

ChunkBytes ChunkTable::bytes(size_t first, size_t last) const noexcept
{
    ChunkBytes b;
    for (size_t i = first; i < last; ++i) {
        const Chunk &c = chunks_[i];
        (c.state == ChunkState::resident ? b.resident : c.state == ChunkState::offloaded ? b.offloaded : b.discarded) +=
            c.size;
    }
    return b;
}

} // namespace tidal::elastic

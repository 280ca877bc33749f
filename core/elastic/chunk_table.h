// The chunks of one elastic allocation: where each one's contents are (mapped on the device,
// in the host home, or dropped) and whether the home is current. Bookkeeping only: the
// ElasticSpace makes the runtime calls and updates the table after each one succeeds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tidal::elastic {

enum class ChunkState : uint8_t {
    resident,  // mapped: the device holds the contents
    offloaded, // unmapped: the host home holds the contents
    discarded, // unmapped: the contents were dropped
};

struct Chunk {
    size_t offset = 0;
    size_t size = 0;
    ChunkState state = ChunkState::resident;
    // The home lacks what the device holds. Only a resident chunk is ever dirty.
    bool dirty = true;
    void *physical = nullptr; // the runtime's chunk while resident
};

struct ChunkBytes {
    uint64_t resident = 0, offloaded = 0, discarded = 0;
};

class ChunkTable {
public:
    // `reserved` bytes (a multiple of the granularity) split into `chunk_size` pieces, the last
    // one shorter; one chunk of `reserved` bytes when that is less than a chunk.
    ChunkTable(size_t reserved, size_t chunk_size);

    size_t count() const noexcept { return chunks_.size(); }
    Chunk &operator[](size_t i) noexcept { return chunks_[i]; }
    const Chunk &operator[](size_t i) const noexcept { return chunks_[i]; }
    // The chunk holding byte `offset` (< reserved).
    size_t index_of(size_t offset) const noexcept { return offset / chunk_size_; }
    // The half-open index range of the chunks [offset, offset+size) touches (size > 0).
    void span(size_t offset, size_t size, size_t *first, size_t *last) const noexcept;
    ChunkBytes bytes(size_t first, size_t last) const noexcept;
    size_t chunk_size() const noexcept { return chunk_size_; }

private:
    size_t chunk_size_;
    std::vector<Chunk> chunks_;
};

} // namespace tidal::elastic

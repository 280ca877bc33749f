#include "elastic/chunk_pool.h"

#include <fmt/format.h>

#include "log/logger.h"

namespace tidal::elastic {

void *ChunkPool::take(int32_t device, size_t size)
{
    auto it = kept_.find({device, size});
    if (it == kept_.end() || it->second.empty())
        return nullptr;
    void *chunk = it->second.back();
    it->second.pop_back();
    bytes_ -= size;
    return chunk;
}

void ChunkPool::put(int32_t device, size_t size, void *chunk)
{
    kept_[{device, size}].push_back(chunk);
    bytes_ += size;
}

uint64_t ChunkPool::trim(int *first_error) noexcept
{
    uint64_t released = 0;
    for (auto &[key, chunks] : kept_) {
        std::vector<void *> refused;
        for (void *chunk : chunks) {
            if (int rc = runtime_.vmm_destroy(chunk); rc != 0) {
                log_error(fmt::format("releasing a kept {}-byte physical chunk of device {} failed: {} ({}); "
                                      "the next trim tries again",
                                      key.second, key.first, runtime_.native_name(rc), rc));
                if (first_error && *first_error == 0)
                    *first_error = rc;
                refused.push_back(chunk);
                continue;
            }
            released += key.second;
            bytes_ -= key.second;
        }
        chunks = std::move(refused);
    }
    return released;
}

} // namespace tidal::elastic

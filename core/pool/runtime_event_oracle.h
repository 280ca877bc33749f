// The pools' EventOracle over the device runtime's events, for one device: tokens index a
// slot table so the pool never holds a runtime handle itself.
#pragma once

#include <mutex>
#include <vector>

#include "pool/event_oracle.h"
#include "runtime/event_pool.h"

namespace tidal::pool {

class RuntimeEventOracle final : public EventOracle {
public:
    // `events` must outlive the oracle; events are made on `device`.
    RuntimeEventOracle(Runtime &runtime, EventPool &events, int32_t device) noexcept
        : runtime_(runtime), events_(events), device_(device) {}
    ~RuntimeEventOracle() override;

    Token record(StreamHandle stream) override;
    bool complete(Token token) noexcept override;
    void retire(Token token) noexcept override;
    void synchronize(StreamHandle stream) override;

private:
    Runtime &runtime_;
    EventPool &events_;
    int32_t device_;
    std::mutex mutex_;
    std::vector<void *> slots_;     // token -> event; nullptr when free
    std::vector<Token> free_slots_;
};

} // namespace tidal::pool

#include "validation/atomic_set_check.h"

#include <algorithm>
#include <cstring>

namespace tidal {

namespace as = atomic_set;

namespace {

template <typename T> T load(const AtomicSetCheck::Words &w, size_t offset)
{
    T v;
    std::memcpy(&v, w.data() + offset, sizeof v);
    return v;
}

template <typename T> void store(AtomicSetCheck::Words &w, size_t offset, T v) { std::memcpy(w.data() + offset, &v, sizeof v); }

// Who took part and how many rounds each ran.
struct Participants {
    uint32_t count;
    uint32_t device_rounds, host_rounds;
    uint32_t rounds(uint32_t p) const { return p < as::kDeviceThreads ? device_rounds : host_rounds; }
    uint64_t operations() const
    {
        return uint64_t{as::kDeviceThreads} * device_rounds + uint64_t{count - as::kDeviceThreads} * host_rounds;
    }
};

// The exact final value of a bit, integer or exchange word, as 64 bits (32-bit words in the low half).
uint64_t expected(uint32_t op, const Participants &who)
{
    const uint32_t width = as::wide(op) ? 64 : 32;
    const uint64_t mask = width == 64 ? ~uint64_t{0} : 0xFFFFFFFFu;
    uint64_t bits = 0, toggles = 0;
    for (uint32_t p = 0; p < who.count; ++p) {
        bits |= uint64_t{1} << as::bit_of(p, width);
        if (who.rounds(p) % 2)
            toggles ^= uint64_t{1} << as::bit_of(p, width);
    }
    uint64_t lo = ~uint64_t{0}, hi = 0;
    auto offers = [&] {
        for (uint32_t p = 0; p < who.count; ++p)
            for (uint32_t r = 0; r < who.rounds(p); ++r) {
                const uint64_t v = width == 64 ? as::offer(p, r) << 32 | as::offer(p, r) : as::offer(p, r);
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    };
    const uint64_t init = as::initial(op);
    switch (op) {
    case as::and32: case as::and64: return init & ~bits & mask;
    case as::or32: case as::or64: return (init | bits) & mask;
    case as::xor32: case as::xor64: return (init ^ toggles) & mask;
    case as::add32: case as::add64: case as::cas32: case as::cas64: return (init + who.operations()) & mask;
    case as::sub32: case as::sub64: return (init - who.operations()) & mask;
    case as::min32: case as::min64: offers(); return std::min(init, lo);
    case as::max32: case as::max64: offers(); return std::max(init, hi);
    default: return 0;
    }
}

// Exchange: the first value plus everything written is exactly everything returned plus
// what the word holds at the end.
uint64_t written_sum(uint32_t op, const Participants &who)
{
    uint64_t sum = as::initial(op);
    for (uint32_t p = 0; p < who.count; ++p)
        for (uint32_t r = 0; r < who.rounds(p); ++r)
            sum += op == as::exch64 ? as::offer(p, r) << 32 | as::offer(p, r) : as::offer(p, r);
    return sum;
}

} // namespace

uint64_t AtomicSetCheck::max_rounds(bool shared)
{
    const uint64_t per_round = as::kDeviceThreads + (shared ? uint64_t{kHostThreads} * kHostRoundFactor : 0);
    return as::kMaxFloatAdds / per_round;
}

AtomicSetCheck::Words AtomicSetCheck::initial()
{
    Words w{};
    for (uint32_t op = 0; op < as::op_count; ++op) {
        const size_t at = size_t{op} * as::kSlotBytes;
        if (op == as::fadd32)
            store(w, at, 0.0f);
        else if (as::wide(op))
            store(w, at, as::initial(op));
        else
            store(w, at, static_cast<uint32_t>(as::initial(op)));
    }
    return w;
}

void AtomicSetCheck::start(unsigned char *words)
{
    if (!shared_)
        return;
    for (uint32_t h = 0; h < kHostThreads; ++h)
        threads_.emplace_back([this, words, p = as::kDeviceThreads + h] {
            while (!go_.load(std::memory_order_acquire))
                std::this_thread::yield();
            for (uint32_t r = 0; r < rounds_ * kHostRoundFactor; ++r)
                as::cpu_round(words, as::kAllOps, p, r, true);
        });
}

void AtomicSetCheck::finish()
{
    release(); // threads never released (the launch failed) must still end
    for (std::thread &t : threads_)
        t.join();
    threads_.clear();
}

uint32_t AtomicSetCheck::wrong(const Words &w) const
{
    const Participants who{as::kDeviceThreads + (shared_ ? kHostThreads : 0), rounds_, rounds_ * kHostRoundFactor};
    uint32_t bad = 0;
    for (uint32_t op = 0; op < as::op_count; ++op) {
        const size_t at = size_t{op} * as::kSlotBytes;
        bool ok = false;
        if (op == as::fadd32)
            ok = load<float>(w, at) == static_cast<float>(who.operations());
        else if (op == as::exch32 || op == as::exch64)
            ok = written_sum(op, who) ==
                 load<uint64_t>(w, at + 8) + (op == as::exch64 ? load<uint64_t>(w, at) : load<uint32_t>(w, at));
        else
            ok = expected(op, who) == (as::wide(op) ? load<uint64_t>(w, at) : load<uint32_t>(w, at));
        if (!ok)
            bad |= 1u << op;
    }
    return bad;
}

} // namespace tidal

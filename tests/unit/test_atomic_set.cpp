// The atomic set's exact check (core/validation/atomic_set_check): every participant's
// contribution run on the CPU leaves words it accepts, and a single wrong bit in any word is
// caught and named by its operation.
#include <doctest/doctest.h>

#include <cstring>

#include "tidal/tidal.h"
#include "validation/atomic_set_check.h"

using tidal::AtomicSetCheck;
namespace as = tidal::atomic_set;

namespace {

// Runs every participant's rounds in order: what the device and host threads leave, in one
// of the interleavings the check must accept.
AtomicSetCheck::Words run_all(uint32_t rounds, bool shared, bool float_adds = true)
{
    AtomicSetCheck::Words w = AtomicSetCheck::initial();
    alignas(16) unsigned char words[as::kBytes];
    std::memcpy(words, w.data(), w.size());
    for (uint32_t r = 0; r < rounds; ++r)
        for (uint32_t t = 0; t < as::kDeviceThreads; ++t)
            as::cpu_round(words, as::kAllOps, t, r, float_adds);
    if (shared)
        for (uint32_t h = 0; h < AtomicSetCheck::kHostThreads; ++h)
            for (uint32_t r = 0; r < rounds * AtomicSetCheck::kHostRoundFactor; ++r)
                as::cpu_round(words, as::kAllOps, as::kDeviceThreads + h, r, true);
    std::memcpy(w.data(), words, w.size());
    return w;
}

} // namespace

TEST_CASE("atomic set: the public bits follow the kernels' operations")
{
    CHECK(as::kBytes == TIDAL_ATOMIC_SET_BYTES);
    CHECK(as::kAllOps == TIDAL_ATOMIC_ALL);
    CHECK((1u << as::exch32) == TIDAL_ATOMIC_EXCH32);
    CHECK((1u << as::min64) == TIDAL_ATOMIC_MIN64);
}

TEST_CASE("atomic set: exact results pass, device alone and shared with the host")
{
    for (bool shared : {false, true})
        for (uint32_t rounds : {1u, 3u, 16u}) {
            CAPTURE(shared);
            CAPTURE(rounds);
            CHECK(AtomicSetCheck(rounds, shared).wrong(run_all(rounds, shared)) == 0);
        }
}

TEST_CASE("atomic set: one wrong bit in any word names its operation")
{
    const AtomicSetCheck check(5, true);
    const AtomicSetCheck::Words good = run_all(5, true);
    for (uint32_t op = 0; op < as::op_count; ++op)
        for (size_t byte : {size_t{0}, size_t{3}}) {
            CAPTURE(op);
            AtomicSetCheck::Words bad = good;
            bad[op * as::kSlotBytes + byte] ^= 0x10;
            CHECK(check.wrong(bad) == 1u << op);
        }
    // The exchange's sum of returned values is checked too.
    AtomicSetCheck::Words bad = good;
    bad[as::exch64 * as::kSlotBytes + 8] ^= 1;
    CHECK(check.wrong(bad) == TIDAL_ATOMIC_EXCH64);
}

TEST_CASE("atomic set: a missing participant or lost float adds are caught")
{
    // Host threads that never ran: every counting and bit operation comes out short.
    const uint32_t missing = AtomicSetCheck(4, true).wrong(run_all(4, false));
    CHECK((missing & TIDAL_ATOMIC_ADD64) != 0);
    CHECK((missing & TIDAL_ATOMIC_OR32) != 0);
    CHECK((missing & TIDAL_ATOMIC_FADD32) != 0);
    // The simulated MI200 on fine-grained memory: only the float add is wrong.
    CHECK(AtomicSetCheck(4, false).wrong(run_all(4, false, false)) == TIDAL_ATOMIC_FADD32);
}

TEST_CASE("atomic set: the round limit keeps float adds exact")
{
    for (bool shared : {false, true}) {
        const uint64_t most = AtomicSetCheck::max_rounds(shared);
        const uint64_t per_round = as::kDeviceThreads + (shared ? AtomicSetCheck::kHostThreads * AtomicSetCheck::kHostRoundFactor : 0);
        CHECK(most * per_round <= as::kMaxFloatAdds);
        CHECK((most + 1) * per_round > as::kMaxFloatAdds);
    }
}

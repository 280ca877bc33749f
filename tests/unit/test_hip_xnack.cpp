// The HIP module's XNACK verdict (core/runtime/hip/hip_xnack.h): pure, so no GPU is needed.
// The table these cases walk through is the one documented at the top of hip_xnack.h.
#include <doctest/doctest.h>

#include <string>

#include "runtime/hip/hip_xnack.h"

using tidal::hip::ArchXnack;
using tidal::hip::arch_xnack_feature;
using tidal::hip::classify_xnack;
using tidal::hip::XnackState;

namespace {
bool mentions(const std::string &reason, const char *text)
{
    return reason.find(text) != std::string::npos;
}
} // namespace

TEST_SUITE("hip xnack")
{
    TEST_CASE("the xnack feature is read from any position of gcnArchName")
    {
        CHECK(arch_xnack_feature("gfx90a:sramecc+:xnack+") == ArchXnack::plus);
        CHECK(arch_xnack_feature("gfx90a:sramecc-:xnack-") == ArchXnack::minus);
        CHECK(arch_xnack_feature("gfx90a:xnack+:sramecc+") == ArchXnack::plus);
        CHECK(arch_xnack_feature("gfx942:xnack-") == ArchXnack::minus);
        CHECK(arch_xnack_feature("gfx1030") == ArchXnack::absent);
        CHECK(arch_xnack_feature("") == ArchXnack::absent);
        // Tokens must match exactly: no sign, a longer word, or the processor name itself.
        CHECK(arch_xnack_feature("gfx90a:xnack") == ArchXnack::absent);
        CHECK(arch_xnack_feature("gfx90a:xnack+x") == ArchXnack::absent);
        CHECK(arch_xnack_feature("xnack+") == ArchXnack::absent);
        CHECK(arch_xnack_feature("gfx90a:sramecc+:") == ArchXnack::absent);
    }

    TEST_CASE("verdict values are tidal_xnack numbers")
    {
        CHECK(static_cast<int>(XnackState::on) == TIDAL_XNACK_ON);
        CHECK(static_cast<int>(XnackState::off) == TIDAL_XNACK_OFF);
        CHECK(static_cast<int>(XnackState::unknown) == TIDAL_XNACK_UNKNOWN);
    }

    TEST_CASE("xnack+ is on unless pageable access contradicts it")
    {
        const auto both = classify_xnack("gfx90a:sramecc+:xnack+", 1, "1");
        CHECK(both.state == XnackState::on);
        CHECK(mentions(both.reason, "xnack+"));
        CHECK(mentions(both.reason, "pageableMemoryAccess=1"));

        const auto unreadable = classify_xnack("gfx90a:sramecc+:xnack+", -1, nullptr);
        CHECK(unreadable.state == XnackState::on);
        CHECK(mentions(unreadable.reason, "unreadable"));

        // Another GPU with XNACK off (or no HMM) turns the system-wide attribute to 0.
        const auto contradicted = classify_xnack("gfx90a:sramecc+:xnack+", 0, "1");
        CHECK(contradicted.state == XnackState::unknown);
        CHECK(mentions(contradicted.reason, "pageableMemoryAccess=0"));
    }

    TEST_CASE("xnack- is off whatever else says otherwise")
    {
        CHECK(classify_xnack("gfx90a:sramecc+:xnack-", 0, nullptr).state == XnackState::off);
        const auto disagree = classify_xnack("gfx90a:sramecc+:xnack-", 1, nullptr);
        CHECK(disagree.state == XnackState::off);
        CHECK(mentions(disagree.reason, "disagrees"));

        // gfx908 cannot enable XNACK: HSA_XNACK=1 is named as not granted.
        const auto asked = classify_xnack("gfx908:sramecc+:xnack-", 0, "1");
        CHECK(asked.state == XnackState::off);
        CHECK(mentions(asked.reason, "HSA_XNACK=1 was asked but not granted"));
        CHECK_FALSE(mentions(classify_xnack("gfx908:sramecc+:xnack-", 0, nullptr).reason,
                             "HSA_XNACK"));
    }

    TEST_CASE("without a suffix pageable access decides")
    {
        const auto on = classify_xnack("gfx1030", 1, nullptr);
        CHECK(on.state == XnackState::on);
        CHECK(mentions(on.reason, "no xnack feature"));
        CHECK(classify_xnack("gfx1030", 0, nullptr).state == XnackState::off);
        CHECK(classify_xnack("gfx1030", 0, "1").state == XnackState::off);
        // Any non-zero attribute value counts as 1.
        CHECK(classify_xnack("gfx1030", 7, nullptr).state == XnackState::on);
    }

    TEST_CASE("without a suffix or the attribute only HSA_XNACK=0 is conclusive")
    {
        CHECK(classify_xnack("gfx1030", -1, "0").state == XnackState::off);
        const auto asked = classify_xnack("gfx1030", -1, "1");
        CHECK(asked.state == XnackState::unknown);
        CHECK(mentions(asked.reason, "HSA_XNACK=1 unconfirmed"));
        CHECK(classify_xnack("gfx1030", -1, nullptr).state == XnackState::unknown);
        CHECK(classify_xnack("", -1, nullptr).state == XnackState::unknown);
    }

    TEST_CASE("HSA_XNACK values other than 0/1 are named and ignored")
    {
        const auto odd = classify_xnack("gfx1030", -1, "yes");
        CHECK(odd.state == XnackState::unknown);
        CHECK(mentions(odd.reason, "HSA_XNACK='yes' is neither 0 nor 1"));
        CHECK(classify_xnack("gfx90a:xnack+", 1, "").state == XnackState::on);
    }

    TEST_CASE("HSA_XNACK=0 does not override what the device reports")
    {
        const auto v = classify_xnack("gfx90a:sramecc+:xnack+", 1, "0");
        CHECK(v.state == XnackState::on);
        CHECK(mentions(v.reason, "HSA_XNACK=0"));
    }
}

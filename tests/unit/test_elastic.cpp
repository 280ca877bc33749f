// ElasticSpace over the simulated device's table with a virtual-memory group of the test's
// own on host memory: a reservation is PROT_NONE address space, a physical chunk a memfd,
// a mapping that memfd mapped at a fixed address, so a chunk that is not resident really is
// out of reach. Every call can be made to fail (the sweep at the end).
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "config/config_loader.h"
#include "config/settings_describer.h"
#include "copy/copy_engine.h"
#include "elastic/elastic_space.h"
#include "registry/allocation_registry.h"
#include "runtime/sim/sim_module.h"
#include "status/error.h"

using namespace tidal;
using namespace tidal::elastic;

namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kGranule = 64 * kKiB;
constexpr int kInvalidValue = 1, kOutOfMemory = 2; // HIP's numbers, as the simulated device uses

// The fake device memory: what is reserved, created and mapped, and a capacity.
struct FakeVmm {
    std::map<char *, size_t> reservations;
    std::map<void *, std::pair<int, size_t>> chunks; // chunk -> memfd, size
    std::map<char *, void *> mappings;               // address -> chunk
    std::set<void *> registered;
    size_t capacity = 1 << 30, created_bytes = 0;
    uint64_t calls = 0, fail_at = 0; // fail the fail_at-th call (0: none)
    uint64_t creates = 0, registrations = 0;

    bool fail() { return fail_at != 0 && ++calls == fail_at; }
    void reset()
    {
        *this = FakeVmm{};
    }
} fake;

int fake_granularity(void *, int32_t, uint64_t *bytes)
{
    if (fake.fail())
        return kInvalidValue;
    *bytes = kGranule;
    return 0;
}

int fake_reserve(void *, int32_t, size_t size, void **ptr)
{
    if (fake.fail())
        return kOutOfMemory;
    void *p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return kOutOfMemory;
    fake.reservations[static_cast<char *>(p)] = size;
    *ptr = p;
    return 0;
}

int fake_release(void *, void *ptr, size_t size)
{
    if (fake.fail())
        return kInvalidValue;
    char *p = static_cast<char *>(ptr);
    auto it = fake.reservations.find(p);
    if (it == fake.reservations.end() || it->second != size)
        return kInvalidValue;
    for (const auto &[at, chunk] : fake.mappings)
        if (at >= p && at < p + size)
            return kInvalidValue; // something is still mapped in it
    munmap(p, size);
    fake.reservations.erase(it);
    return 0;
}

int fake_create(void *, int32_t, size_t size, void **chunk)
{
    if (fake.fail() || fake.created_bytes + size > fake.capacity)
        return kOutOfMemory;
    const int fd = memfd_create("tidal-fake-chunk", 0);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0)
        return kOutOfMemory;
    void *handle = new char; // a unique handle
    fake.chunks[handle] = {fd, size};
    fake.created_bytes += size;
    ++fake.creates;
    *chunk = handle;
    return 0;
}

int fake_destroy(void *, void *chunk)
{
    if (fake.fail())
        return kInvalidValue;
    auto it = fake.chunks.find(chunk);
    if (it == fake.chunks.end())
        return kInvalidValue;
    for (const auto &[at, c] : fake.mappings)
        if (c == chunk)
            return kInvalidValue;
    close(it->second.first);
    fake.created_bytes -= it->second.second;
    fake.chunks.erase(it);
    delete static_cast<char *>(chunk);
    return 0;
}

int fake_map(void *, void *ptr, size_t size, void *chunk)
{
    if (fake.fail())
        return kOutOfMemory;
    auto it = fake.chunks.find(chunk);
    if (it == fake.chunks.end() || it->second.second != size || fake.mappings.count(static_cast<char *>(ptr)))
        return kInvalidValue;
    if (mmap(ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, it->second.first, 0) == MAP_FAILED)
        return kOutOfMemory;
    fake.mappings[static_cast<char *>(ptr)] = chunk;
    return 0;
}

int fake_set_access(void *, int32_t, void *ptr, size_t size)
{
    if (fake.fail())
        return kInvalidValue;
    for (char *p = static_cast<char *>(ptr); p < static_cast<char *>(ptr) + size; p += kGranule) {
        auto it = fake.mappings.upper_bound(p);
        if (it == fake.mappings.begin())
            return kInvalidValue;
        --it;
        if (p >= it->first + fake.chunks[it->second].second)
            return kInvalidValue; // not mapped
    }
    return mprotect(ptr, size, PROT_READ | PROT_WRITE) == 0 ? 0 : kInvalidValue;
}

int fake_unmap(void *, void *ptr, size_t size)
{
    if (fake.fail())
        return kInvalidValue;
    char *p = static_cast<char *>(ptr);
    for (char *at = p; at < p + size;) {
        auto it = fake.mappings.find(at);
        if (it == fake.mappings.end())
            return kInvalidValue;
        at += fake.chunks[it->second].second;
    }
    mmap(p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    for (auto it = fake.mappings.lower_bound(p); it != fake.mappings.end() && it->first < p + size;)
        it = fake.mappings.erase(it);
    return 0;
}

int fake_register(void *rt, void *ptr, size_t size)
{
    if (fake.fail())
        return kOutOfMemory;
    const int rc = sim::sim_ops()->host_register(rt, ptr, size);
    if (rc == 0) {
        fake.registered.insert(ptr);
        ++fake.registrations;
    }
    return rc;
}

int fake_unregister(void *rt, void *ptr)
{
    fake.registered.erase(ptr);
    return sim::sim_ops()->host_unregister(rt, ptr);
}

// The simulated device's table with the fake group (or none: every vmm field NULL).
tidal_rt_ops sim_with_vmm(bool fake_group)
{
    tidal_rt_ops o = *sim::sim_ops();
    o.vmm_granularity = fake_group ? fake_granularity : nullptr;
    o.vmm_reserve = fake_group ? fake_reserve : nullptr;
    o.vmm_release = fake_group ? fake_release : nullptr;
    o.vmm_create = fake_group ? fake_create : nullptr;
    o.vmm_destroy = fake_group ? fake_destroy : nullptr;
    o.vmm_map = fake_group ? fake_map : nullptr;
    o.vmm_set_access = fake_group ? fake_set_access : nullptr;
    o.vmm_unmap = fake_group ? fake_unmap : nullptr;
    o.host_register = fake_register;
    o.host_unregister = fake_unregister;
    return o;
}

const tidal_rt_ops *vmm_ops()
{
    static const tidal_rt_ops ops = sim_with_vmm(true);
    return &ops;
}

const tidal_rt_ops *no_vmm_ops()
{
    static const tidal_rt_ops ops = sim_with_vmm(false);
    return &ops;
}

// A runtime, a registry, a copy engine and the space, as a Context holds them.
struct Rig {
    Settings settings;
    std::unique_ptr<Runtime> runtime;
    AllocationRegistry registry;
    std::unique_ptr<CopyEngine> copies;
    std::unique_ptr<ElasticSpace> space;

    explicit Rig(const char *elastic = "", const tidal_rt_ops *ops = vmm_ops())
    {
        fake.reset();
        settings = ConfigLoader::from_string(std::string("runtime = \"sim\"\n[elastic]\nchunk_size = \"128KiB\"\n") + elastic);
        void *rt = nullptr;
        REQUIRE(sim::sim_create(settings.sim, &rt, nullptr, 0) == 0);
        runtime = std::make_unique<Runtime>(ops, rt, "sim with a fake vmm");
        copies = std::make_unique<CopyEngine>(*runtime, registry, settings.copy);
        space = std::make_unique<ElasticSpace>(*runtime, settings.elastic);
    }
    ~Rig()
    {
        space.reset();
        copies.reset();
    }

    char *allocate(size_t size, const char *tag)
    {
        size_t reserved = 0, granularity = 0;
        auto *p = static_cast<char *>(space->allocate(size, 0, 0, tag, &reserved, &granularity));
        AllocationRecord r;
        r.base = r.raw = p;
        r.size = size;
        r.raw_size = reserved;
        r.kind = TIDAL_KIND_ELASTIC;
        r.device = 0;
        r.alignment = granularity;
        registry.insert(r);
        return p;
    }
    void free(char *p)
    {
        registry.remove(p);
        space->release(p);
    }
};

void fill(char *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; ++i)
        p[i] = static_cast<char>((i * 131 + seed) & 0xff);
}

bool filled(const char *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; ++i)
        if (p[i] != static_cast<char>((i * 131 + seed) & 0xff))
            return false;
    return true;
}

tidal_elastic_result result() { return TIDAL_ELASTIC_RESULT_INIT; }

constexpr size_t kSize = 300 * kKiB; // 320 KiB reserved: chunks of 128, 128 and 64 KiB
constexpr size_t kReserved = 320 * kKiB;

} // namespace

TEST_CASE("elastic: chunks are the configured size, the last one shorter, a small allocation one chunk")
{
    ChunkTable t(kReserved, 128 * kKiB);
    REQUIRE(t.count() == 3);
    CHECK(t[2].offset == 256 * kKiB);
    CHECK(t[2].size == 64 * kKiB);
    size_t first = 0, last = 0;
    t.span(127 * kKiB, 2 * kKiB, &first, &last);
    CHECK(first == 0);
    CHECK(last == 2);
    ChunkTable small(kGranule, 128 * kKiB);
    REQUIRE(small.count() == 1);
    CHECK(small[0].size == kGranule);
}

TEST_CASE("elastic: offload and restore bring the contents back bit-identical at the same address")
{
    Rig rig;
    char *p = rig.allocate(kSize, "weights.0");
    fill(p, kSize, 7);
    tidal_elastic_result out = result();
    rig.space->offload("weights*", 0, nullptr, out);
    CHECK(out.allocations == 1);
    CHECK(out.copied_bytes == kReserved);
    CHECK(out.released_bytes == kReserved);
    CHECK(out.discarded_bytes == 0);
    CHECK(fake.chunks.empty()); // the physical memory went back to the runtime
    CHECK(fake.mappings.empty());
    CHECK(rig.space->bytes(p, 0, 0).offloaded == kReserved);

    out = result();
    rig.space->restore("weights*", 0, nullptr, out);
    CHECK(out.mapped_bytes == kReserved);
    CHECK(out.copied_bytes == kReserved);
    CHECK(rig.space->bytes(p, 0, 0).resident == kReserved);
    CHECK(filled(p, kSize, 7));

    tidal_migration_stats stats = TIDAL_MIGRATION_STATS_INIT;
    rig.space->add_stats(0, stats);
    CHECK(stats.elastic_offloads == 3);
    CHECK(stats.elastic_restores == 3);
    CHECK(stats.elastic_copied_out == kReserved);
    CHECK(stats.elastic_copied_in == kReserved);
    rig.free(p);
    CHECK(fake.reservations.empty());
    CHECK(fake.registered.empty()); // the home went with it
}

TEST_CASE("elastic: a chunk restored read-only leaves again with no copy; a written one is copied")
{
    Rig rig;
    char *p = rig.allocate(kSize, "w");
    tidal_elastic_result out = result();
    rig.space->offload("w", 0, nullptr, out);
    out = result();
    rig.space->restore("w", TIDAL_RESTORE_READ_ONLY, nullptr, out);
    out = result();
    rig.space->offload("w", 0, nullptr, out);
    CHECK(out.copied_bytes == 0);
    CHECK(out.released_bytes == kReserved);
    out = result();
    rig.space->restore("w", 0, nullptr, out); // may be written: the next offload copies
    out = result();
    rig.space->offload("w", 0, nullptr, out);
    CHECK(out.copied_bytes == kReserved);
    rig.free(p);
}

TEST_CASE("elastic: discard drops the contents with no home; keep-physical keeps the chunks for tidal")
{
    Rig rig;
    char *p = rig.allocate(kSize, "kv");
    tidal_elastic_result out = result();
    SUBCASE("discard")
    {
        rig.space->offload("kv", TIDAL_OFFLOAD_DISCARD, nullptr, out);
        CHECK(out.copied_bytes == 0);
        CHECK(out.discarded_bytes == kReserved);
        CHECK(fake.registrations == 0); // no home was made
        CHECK(rig.space->bytes(p, 0, 0).discarded == kReserved);
        out = result();
        rig.space->restore("kv", TIDAL_RESTORE_READ_ONLY, nullptr, out);
        CHECK(out.copied_bytes == 0);
        CHECK(out.mapped_bytes == kReserved);
        // Contents undefined, and never taken for clean: the next offload copies them.
        out = result();
        rig.space->offload("kv", 0, nullptr, out);
        CHECK(out.copied_bytes == kReserved);
    }
    SUBCASE("keep physical")
    {
        const uint64_t creates = fake.creates;
        rig.space->offload("kv", TIDAL_OFFLOAD_KEEP_PHYSICAL | TIDAL_OFFLOAD_DISCARD, nullptr, out);
        CHECK(out.pooled_bytes == kReserved);
        CHECK(out.released_bytes == 0);
        CHECK(fake.chunks.size() == 3);
        out = result();
        char *q = rig.allocate(kSize, "other"); // tidal's own allocation takes them
        CHECK(fake.creates == creates);
        rig.space->restore("kv", 0, nullptr, out);
        CHECK(out.pooled_bytes == 0);
        CHECK(fake.creates == creates + 3);
        rig.free(q);
        rig.space->offload("kv", TIDAL_OFFLOAD_KEEP_PHYSICAL, nullptr, out);
        CHECK(rig.space->trim(nullptr) == kReserved);
        CHECK(fake.chunks.empty());
    }
    rig.free(p);
}

TEST_CASE("elastic: a tag that matches nothing is no error and moves nothing")
{
    Rig rig;
    char *p = rig.allocate(kSize, "weights");
    tidal_elastic_result out = result();
    rig.space->offload("kv*", 0, nullptr, out);
    CHECK(out.allocations == 0);
    CHECK(out.copied_bytes + out.released_bytes + out.discarded_bytes == 0);
    rig.space->restore("kv*", 0, nullptr, out);
    CHECK(out.mapped_bytes == 0);
    CHECK(rig.space->bytes(p, 0, 0).resident == kReserved);
    rig.free(p);
}

TEST_CASE("elastic: a restore onto a full device is OUT_OF_MEMORY and leaves nothing of it mapped")
{
    Rig rig;
    char *p = rig.allocate(kSize, "a");
    fill(p, kSize, 3);
    tidal_elastic_result out = result();
    rig.space->offload("a", 0, nullptr, out);
    fake.capacity = kReserved + 192 * kKiB; // room for the other one and one more chunk of this one
    char *q = rig.allocate(kSize, "b");
    out = result();
    try {
        rig.space->restore("a", 0, nullptr, out);
        FAIL("the restore succeeded on a full device");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
    }
    CHECK(out.mapped_bytes == 0);
    CHECK(rig.space->bytes(p, 0, 0).offloaded == kReserved);
    for (const auto &[at, chunk] : fake.mappings)
        CHECK((at < p || at >= p + kReserved));
    CHECK(fake.created_bytes == kReserved); // the one chunk it got went back
    rig.free(q);
    out = result();
    rig.space->restore("a", 0, nullptr, out); // and once there is room, all of it comes back
    CHECK(filled(p, kSize, 3));
    rig.free(p);
}

TEST_CASE("elastic: a host home that cannot be made is OUT_OF_MEMORY and the device copy stays")
{
    Rig rig;
    char *p = rig.allocate(kSize, "a");
    fill(p, kSize, 5);
    fake.calls = 0;
    fake.fail_at = 1; // the registration of the home
    tidal_elastic_result out = result();
    try {
        rig.space->offload("a", 0, nullptr, out);
        FAIL("the offload succeeded without a home");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
        CHECK(std::string(e.what()).find("host home") != std::string::npos);
    }
    CHECK(rig.space->bytes(p, 0, 0).resident == kReserved);
    CHECK(filled(p, kSize, 5));
    rig.free(p);
}

TEST_CASE("elastic: with home = \"eager\" the home is made with the allocation, not in the offload")
{
    Rig rig("home = \"eager\"\n");
    char *p = rig.allocate(kSize, "a");
    CHECK(fake.registrations == 1);
    tidal_elastic_result out = result();
    rig.space->offload("a", 0, nullptr, out);
    CHECK(out.home_seconds == 0.0);
    CHECK(fake.registrations == 1);
    rig.free(p);
    CHECK(fake.registered.empty());
}

TEST_CASE("elastic: freeing an offloaded allocation releases its home and its reservation")
{
    Rig rig;
    char *p = rig.allocate(kSize, "a");
    tidal_elastic_result out = result();
    rig.space->offload("a", 0, nullptr, out);
    CHECK(fake.registered.size() == 1);
    rig.free(p);
    CHECK(fake.registered.empty());
    CHECK(fake.reservations.empty());
    CHECK(rig.space->empty());
}

TEST_CASE("elastic: copies into and out of partly resident memory; discarded chunks are refused")
{
    Rig rig;
    char *p = rig.allocate(kSize, "a");
    fill(p, kSize, 9);
    tidal_elastic_result out = result();
    rig.space->offload_range(p, 130 * kKiB, 1, 0, nullptr, out); // the middle chunk
    CHECK(out.copied_bytes == 128 * kKiB);
    CHECK(rig.space->bytes(p, 0, 0).resident == 192 * kKiB);
    std::vector<char> host(kSize);
    rig.space->copy(host.data(), p, kSize, {nullptr, p}, nullptr, *rig.copies);
    CHECK(filled(host.data(), kSize, 9));
    fill(host.data(), kSize, 11);
    rig.space->copy(p + 1, host.data(), kSize - 1, {p, nullptr}, nullptr, *rig.copies); // a write across all three
    CHECK(rig.space->bytes(p, 0, 0).offloaded == 128 * kKiB);              // still offloaded: written in the home
    out = result();
    rig.space->restore_range(p, 200 * kKiB, 1, 0, nullptr, out);
    CHECK(std::memcmp(p + 1, host.data(), kSize - 1) == 0);

    out = result();
    rig.space->offload_range(p, 0, 1, TIDAL_OFFLOAD_DISCARD, nullptr, out);
    std::vector<char> before(host);
    try {
        rig.space->copy(host.data(), p, kSize, {nullptr, p}, nullptr, *rig.copies);
        FAIL("a read of discarded memory succeeded");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(e.what()).find("discarded") != std::string::npos);
    }
    CHECK(host == before); // nothing was copied
    try {
        rig.space->copy(p, host.data(), kSize + 1, {p, nullptr}, nullptr, *rig.copies);
        FAIL("a copy past the end succeeded");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_INVALID_ARGUMENT);
    }
    rig.free(p);
}

TEST_CASE("elastic: a runtime without the virtual-memory group is NOT_SUPPORTED, saying so")
{
    Rig rig("", no_vmm_ops());
    try {
        rig.allocate(kSize, "a");
        FAIL("elastic memory without a virtual-memory API");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_NOT_SUPPORTED);
        CHECK(std::string(e.what()).find("virtual-memory") != std::string::npos);
    }
}

TEST_CASE("elastic: every virtual-memory call failing in turn gives a status and leaks nothing")
{
    // The scenario's calls, counted once without faults; then each one fails in its own run.
    auto scenario = [](Rig &rig) {
        std::vector<tidal_status> statuses;
        auto step = [&](auto &&body) {
            try {
                body();
                statuses.push_back(TIDAL_OK);
            } catch (const Error &e) {
                statuses.push_back(e.status());
            }
        };
        char *p = nullptr, *q = nullptr;
        step([&] { p = rig.allocate(kSize, "a"); });
        step([&] { q = rig.allocate(kSize, "b"); });
        tidal_elastic_result out = result();
        step([&] { rig.space->offload("a", 0, nullptr, out); });
        step([&] { rig.space->offload("b", TIDAL_OFFLOAD_KEEP_PHYSICAL | TIDAL_OFFLOAD_DISCARD, nullptr, out); });
        step([&] { rig.space->restore("*", 0, nullptr, out); });
        step([&] { rig.space->offload_range(p ? p : q, 0, 1, 0, nullptr, out); });
        if (p)
            rig.free(p);
        if (q)
            rig.free(q);
        return statuses;
    };
    uint64_t total = 0;
    {
        Rig rig;
        fake.fail_at = ~uint64_t{0};
        for (tidal_status s : scenario(rig))
            CHECK(s == TIDAL_OK);
        total = fake.calls;
    }
    REQUIRE(total > 20);
    for (uint64_t n = 1; n <= total; ++n) {
        CAPTURE(n);
        {
            Rig rig;
            fake.fail_at = n;
            for (tidal_status s : scenario(rig))
                CHECK(s != TIDAL_ERROR_INTERNAL);
        }
        // What a failing unmap, destroy or release kept back, the space gave back at its end.
        CHECK(fake.mappings.empty());
        CHECK(fake.chunks.empty());
        CHECK(fake.reservations.empty());
        CHECK(fake.registered.empty());
    }
}

TEST_CASE("elastic: [elastic] keys are checked like every other and described")
{
    const Settings s = ConfigLoader::from_string("[elastic]\nhome = \"eager\"\nchunk_size = \"8MiB\"\ncopy_streams = 2\n");
    CHECK(s.elastic.eager_home);
    CHECK(s.elastic.chunk_size == 8 * kKiB * kKiB);
    CHECK(s.elastic.copy_streams == 2);
    const std::string text = describe_settings(s);
    CHECK(text.find("[elastic]\nhome = \"eager\"") != std::string::npos);
    for (const char *bad : {"[elastic]\nhomes = \"lazy\"\n", "[elastic]\nhome = \"sometimes\"\n",
                            "[elastic]\nchunk_size = \"1KiB\"\n", "[elastic]\ncopy_streams = 0\n"}) {
        CAPTURE(bad);
        try {
            ConfigLoader::from_string(bad);
            FAIL("accepted");
        } catch (const Error &e) {
            CHECK(e.status() == TIDAL_ERROR_CONFIG);
            CHECK(std::string(e.what()).find("elastic") != std::string::npos);
        }
    }
}

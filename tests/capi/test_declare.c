/* Access declarations, budgets and eviction, advice, stream-ordered allocation and the runtime
 * clock, seen through the C ABI on the simulated device (an H200 profile, xnack on or off). */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define MiB ((size_t)1 << 20)

/* 1 MiB pieces: an 8 MiB array is 8 units, moved in one coalesced call. */
#define SIM_MIGRATION "runtime = \"sim\"\n[migration]\nchunk_size = \"1MiB\"\n"

static tidal_migration_stats stats_of(tidal_context *ctx)
{
    tidal_migration_stats s = TIDAL_MIGRATION_STATS_INIT;
    assert_ok(tidal_migration_stats_get(ctx, 0, &s));
    return s;
}

static void test_declaration_migrates_once_and_coalesces(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(SIM_MIGRATION);
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 8 * MiB, 0);
    assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, p, NULL, 8 * MiB, 7, NULL, NULL));
    assert_ok(tidal_prefetch(ctx, p, 8 * MiB, TIDAL_DEVICE_HOST));
    const tidal_migration_stats before = stats_of(ctx);

    assert_ok(harness_declare(ctx, stream, p, 8 * MiB, TIDAL_ACCESS_READ, 0));
    tidal_migration_stats s = stats_of(ctx);
    assert_int_equal(s.migrated_bytes - before.migrated_bytes, 8 * MiB);
    assert_int_equal(s.migration_calls - before.migration_calls, 1); /* 8 units, one call */
    assert_int_equal(s.resident_bytes, 8 * MiB);
    assert_int_equal(s.protected_bytes, 8 * MiB);
    assert_int_equal(s.declared_ranges - before.declared_ranges, 1);
    assert_int_equal(harness_prefetch_location(ctx, p, 8 * MiB), 0);

    /* The kernel runs on the caller's stream after the migration; the data is intact. */
    uint64_t bad = 1;
    assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, p, NULL, 8 * MiB, 7, stream, &bad));
    assert_int_equal(bad, 0);

    /* Declared again: resident already, nothing moves. */
    assert_ok(harness_declare(ctx, stream, p, 8 * MiB, TIDAL_ACCESS_READ, 0));
    tidal_migration_stats again = stats_of(ctx);
    assert_int_equal(again.migrated_bytes, s.migrated_bytes);
    assert_int_equal(again.resident_hits - s.resident_hits, 8 * MiB);

    /* count 0 ends the phase; once the stream has run, nothing is protected any more. */
    assert_ok(tidal_declare(ctx, stream, NULL, 0, 0));
    assert_ok(tidal_stream_synchronize(ctx, stream));
    assert_ok(tidal_declare(ctx, stream, NULL, 0, 0));
    assert_int_equal(stats_of(ctx).protected_bytes, 0);

    assert_ok(tidal_free(ctx, p));
    assert_int_equal(stats_of(ctx).resident_bytes, 0); /* freeing forgets its residency */
    assert_ok(tidal_stream_destroy(ctx, stream));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_lookahead_moves_ahead_and_the_phase_only_waits(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(SIM_MIGRATION);
    void *a = harness_alloc(ctx, TIDAL_KIND_MANAGED, 4 * MiB, 0);
    void *b = harness_alloc(ctx, TIDAL_KIND_MANAGED, 4 * MiB, 0);
    assert_ok(harness_declare(ctx, NULL, a, 4 * MiB, TIDAL_ACCESS_READ, 0));
    assert_ok(harness_declare(ctx, NULL, b, 4 * MiB, TIDAL_ACCESS_READ, TIDAL_DECLARE_LOOKAHEAD));
    const tidal_migration_stats ahead = stats_of(ctx);
    assert_int_equal(ahead.migrated_bytes, 8 * MiB); /* b moved already */
    assert_int_equal(harness_prefetch_location(ctx, b, 4 * MiB), 0);
    assert_ok(harness_declare(ctx, NULL, b, 4 * MiB, TIDAL_ACCESS_READ, 0));
    const tidal_migration_stats then = stats_of(ctx);
    assert_int_equal(then.migrated_bytes, ahead.migrated_bytes);
    assert_int_equal(then.migration_calls, ahead.migration_calls);
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_context_destroy(ctx));
}

/* Three 8 MiB arrays under a 16 MiB budget: each new phase evicts the oldest finished one. */
static void run_budget_cycle(const char *toml, uint32_t hints, uint32_t mode, int expect_dropped)
{
    tidal_context *ctx = harness_context(toml);
    assert_ok(tidal_budget_set(ctx, 0, 16 * MiB));
    void *arr[3];
    for (int i = 0; i < 3; ++i) {
        arr[i] = harness_alloc(ctx, TIDAL_KIND_MANAGED, 8 * MiB, hints);
        assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, arr[i], NULL, 8 * MiB, 100 + (uint64_t)i, NULL, NULL));
        assert_ok(tidal_prefetch(ctx, arr[i], 8 * MiB, TIDAL_DEVICE_HOST));
    }
    for (int round = 0; round < 6; ++round) {
        void *p = arr[round % 3];
        assert_ok(harness_declare(ctx, NULL, p, 8 * MiB, mode, 0));
        tidal_migration_stats s = stats_of(ctx);
        assert_true(s.resident_bytes <= 16 * MiB);
        const uint64_t seed = 100 + (uint64_t)(round % 3);
        uint64_t bad = 1;
        assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, p, NULL, 8 * MiB, seed, NULL, &bad));
        assert_int_equal(bad, 0);
    }
    tidal_migration_stats s = stats_of(ctx);
    assert_int_equal(s.budget, 16 * MiB);
    assert_int_equal(s.evictions, 4 * 8); /* rounds 2..5 each evict 8 one-MiB units */
    assert_int_equal(s.budget_refusals, 0);
    assert_true(s.resident_high_water <= 16 * MiB);
    if (expect_dropped) {
        assert_int_equal(s.dropped_bytes, 32 * MiB); /* read-only read-mostly data: no copy back */
        assert_int_equal(s.evicted_bytes, 0);
    } else {
        assert_int_equal(s.evicted_bytes, 32 * MiB);
        assert_int_equal(s.dropped_bytes, 0);
    }
    for (int i = 0; i < 3; ++i)
        assert_ok(tidal_free(ctx, arr[i]));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_budget_evicts_written_data_by_copying_back(void **state)
{
    (void)state;
    run_budget_cycle(SIM_MIGRATION, 0, TIDAL_ACCESS_READ_WRITE, 0);
}

static void test_budget_drops_read_only_read_mostly_data(void **state)
{
    (void)state;
    run_budget_cycle(SIM_MIGRATION, TIDAL_HINT_READ_MOSTLY, TIDAL_ACCESS_READ, 1);
}

static void test_budget_with_lru_and_xnack_policies(void **state)
{
    (void)state;
    run_budget_cycle("runtime = \"sim\"\npolicies = [\"xnack\", \"lru\"]\n[migration]\nchunk_size = \"1MiB\"\n",
                     TIDAL_HINT_READ_MOSTLY, TIDAL_ACCESS_READ, 1);
}

static void test_budget_with_parallel_eviction(void **state)
{
    (void)state;
    run_budget_cycle(SIM_MIGRATION "parallel_eviction = true\n", TIDAL_HINT_READ_MOSTLY, TIDAL_ACCESS_READ, 1);
    run_budget_cycle(SIM_MIGRATION "parallel_eviction = true\n", 0, TIDAL_ACCESS_READ_WRITE, 0);
}

static void test_budget_budget_from_toml(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(SIM_MIGRATION "budget = \"3MiB\"\n");
    assert_int_equal(stats_of(ctx).budget, 3 * MiB);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_protected_ranges_over_budget_are_refused_with_nothing_moved(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(SIM_MIGRATION);
    assert_ok(tidal_budget_set(ctx, 0, 4 * MiB));
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 8 * MiB, 0);
    void *q = harness_alloc(ctx, TIDAL_KIND_MANAGED, 2 * MiB, 0);
    assert_status(harness_declare(ctx, NULL, p, 8 * MiB, TIDAL_ACCESS_READ, 0), TIDAL_ERROR_BUDGET_EXCEEDED);
    assert_contains(tidal_last_error(), "budget");
    tidal_migration_stats s = stats_of(ctx);
    assert_int_equal(s.migrated_bytes, 0);
    assert_int_equal(s.budget_refusals, 1);
    /* A lookahead range is protected too: with it in flight, a second range cannot fit. */
    assert_ok(harness_declare(ctx, NULL, q, 2 * MiB, TIDAL_ACCESS_READ, 0));
    assert_ok(harness_declare(ctx, NULL, p, 2 * MiB, TIDAL_ACCESS_READ, TIDAL_DECLARE_LOOKAHEAD));
    assert_status(harness_declare(ctx, NULL, (char *)p + 4 * MiB, 1 * MiB, TIDAL_ACCESS_READ, TIDAL_DECLARE_LOOKAHEAD),
                  TIDAL_ERROR_BUDGET_EXCEEDED);
    assert_int_equal(stats_of(ctx).resident_bytes, 4 * MiB);
    /* Raising the budget lets it through. */
    assert_ok(tidal_budget_set(ctx, 0, 0));
    assert_ok(harness_declare(ctx, NULL, p, 8 * MiB, TIDAL_ACCESS_READ, 0));
    assert_int_equal(stats_of(ctx).resident_bytes, 10 * MiB);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_free(ctx, q));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_memory_that_cannot_move_is_a_counted_noop(void **state)
{
    tidal_context *ctx = *state;
    void *d = harness_alloc(ctx, TIDAL_KIND_DEVICE, 1 * MiB, 0);
    void *h = harness_alloc(ctx, TIDAL_KIND_PINNED, 1 * MiB, 0);
    const uint64_t before = stats_of(ctx).noops;
    assert_ok(harness_declare(ctx, NULL, d, 1 * MiB, TIDAL_ACCESS_READ_WRITE, 0));
    assert_ok(harness_declare(ctx, NULL, h, 1 * MiB, TIDAL_ACCESS_READ, 0));
    assert_ok(tidal_prefetch(ctx, d, 1 * MiB, 0));
    assert_ok(tidal_advise(ctx, d, 1 * MiB, TIDAL_ADVICE_READ_MOSTLY, 0));
    assert_int_equal(stats_of(ctx).noops - before, 4);
    assert_int_equal(stats_of(ctx).migrated_bytes, 0);
    assert_ok(tidal_free(ctx, d));
    assert_ok(tidal_free(ctx, h));
}

static void test_bad_declarations_get_clear_statuses(void **state)
{
    tidal_context *ctx = *state;
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 1 * MiB, 0);
    int local = 0;
    assert_status(harness_declare(ctx, NULL, p, 1 * MiB, 0, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "mode");
    assert_status(harness_declare(ctx, NULL, p, 1 * MiB, 0x10, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_declare(ctx, NULL, p, 1 * MiB, TIDAL_ACCESS_READ, 0x80), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "flags");
    assert_status(harness_declare(ctx, NULL, p, 2 * MiB, TIDAL_ACCESS_READ, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "past the end");
    assert_status(harness_declare(ctx, NULL, p, 0, TIDAL_ACCESS_READ, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_declare(ctx, NULL, &local, sizeof local, TIDAL_ACCESS_READ, 0), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_status(harness_declare(ctx, NULL, NULL, 8, TIDAL_ACCESS_READ, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    tidal_access a[2] = {TIDAL_ACCESS_INIT, TIDAL_ACCESS_INIT};
    a[0].ptr = a[1].ptr = p;
    a[0].size = a[1].size = 4096;
    a[1].device = 7;
    assert_status(tidal_declare(ctx, NULL, a, 2, 0), TIDAL_ERROR_NOT_FOUND);
    a[1].device = 0;
    a[1].struct_size = 8;
    assert_status(tidal_declare(ctx, NULL, a, 2, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "struct_size");
    a[0].struct_size = 8;
    assert_status(tidal_declare(ctx, NULL, a, 2, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_declare(ctx, NULL, NULL, 3, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_declare(NULL, NULL, a, 1, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_budget_set(ctx, 3, 1), TIDAL_ERROR_NOT_FOUND);
    tidal_migration_stats s = TIDAL_MIGRATION_STATS_INIT;
    assert_status(tidal_migration_stats_get(ctx, -1, &s), TIDAL_ERROR_NOT_FOUND);
    s.struct_size = 4;
    assert_status(tidal_migration_stats_get(ctx, 0, &s), TIDAL_ERROR_INVALID_ARGUMENT);
    /* Nothing moved by any of them. */
    assert_int_equal(stats_of(ctx).migrated_bytes, 0);
    assert_ok(tidal_free(ctx, p));
}

/* A count larger than any array is refused before a single entry past the first is read: the
 * one real entry ends where an inaccessible page begins, so reading further would crash. A
 * count such as SIZE_MAX is what a negative number cast to size_t looks like. */
static void test_absurd_counts_are_refused_before_reading(void **state)
{
    tidal_context *ctx = *state;
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 1 * MiB, 0);
    tidal_access *a = harness_alloc_fenced(sizeof *a);
    *a = (tidal_access)TIDAL_ACCESS_INIT;
    a->ptr = p;
    a->size = 4096;
    a->device = 0;
    a->mode = TIDAL_ACCESS_READ;
    const size_t counts[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX / sizeof *a + 1,
                             (size_t)PTRDIFF_MAX / sizeof *a + 1};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
        assert_status(tidal_declare(ctx, NULL, a, counts[i], 0), TIDAL_ERROR_INVALID_ARGUMENT);
        assert_contains(tidal_last_error(), "would not fit in the address space");
        char number[32];
        snprintf(number, sizeof number, "count %zu is too large", counts[i]);
        assert_contains(tidal_last_error(), number);
        assert_status(tidal_declare(ctx, NULL, a, counts[i], TIDAL_DECLARE_LOOKAHEAD), TIDAL_ERROR_INVALID_ARGUMENT);
    }
    /* A newer caller's larger entries (struct_size is the stride): the array's bytes overflow. */
    a->struct_size = (size_t)1 << 20;
    assert_status(tidal_declare(ctx, NULL, a, (size_t)1 << 44, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "1048576 bytes");
    a->struct_size = sizeof *a;
    /* The one real entry still works, and nothing moved before. */
    assert_int_equal(stats_of(ctx).migrated_bytes, 0);
    assert_ok(tidal_declare(ctx, NULL, a, 1, 0));
    assert_true(stats_of(ctx).migrated_bytes >= 4096);
    harness_free_fenced(a, sizeof *a);
    assert_ok(tidal_free(ctx, p));
}

static void test_advice_is_applied_remembered_and_unset(void **state)
{
    tidal_context *ctx = *state;
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 1 * MiB, 0);
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    assert_ok(tidal_advise(ctx, p, 1 * MiB, TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_HOST, 0));
    assert_ok(tidal_range_query(ctx, p, 1 * MiB, &info));
    assert_int_equal(info.read_mostly, 1);
    assert_int_equal(info.preferred_location, TIDAL_DEVICE_HOST);
    tidal_pointer_info pi = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, p, &pi));
    assert_int_equal(pi.advice, TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_HOST);
    assert_ok(tidal_advise(ctx, p, 1 * MiB, TIDAL_ADVICE_PREFERRED_DEVICE, TIDAL_ADVICE_READ_MOSTLY));
    assert_ok(tidal_range_query(ctx, p, 1 * MiB, &info));
    assert_int_equal(info.read_mostly, 0);
    assert_int_equal(info.preferred_location, 0);
    assert_ok(tidal_pointer_query(ctx, p, &pi));
    assert_int_equal(pi.advice, TIDAL_ADVICE_PREFERRED_DEVICE);
    /* Freed and reused from the pool: the next owner starts without the advice. */
    assert_ok(tidal_advise(ctx, p, 1 * MiB, TIDAL_ADVICE_READ_MOSTLY, 0));
    assert_ok(tidal_free(ctx, p));
    void *q = harness_alloc(ctx, TIDAL_KIND_MANAGED, 1 * MiB, 0);
    assert_ptr_equal(q, p);
    assert_ok(tidal_range_query(ctx, q, 1 * MiB, &info));
    assert_int_equal(info.read_mostly, 0);
    assert_int_equal(info.preferred_location, TIDAL_LOCATION_NONE);
    /* Bad input. */
    assert_status(tidal_advise(ctx, q, 1 * MiB, TIDAL_ADVICE_READ_MOSTLY, TIDAL_ADVICE_READ_MOSTLY),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_advise(ctx, q, 1 * MiB, 0x100, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_advise(ctx, q, 1 * MiB, TIDAL_ADVICE_PREFERRED_DEVICE | TIDAL_ADVICE_PREFERRED_HOST, 0),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_advise(ctx, q, 1 * MiB, TIDAL_ADVICE_COARSE_GRAIN, 0), TIDAL_ERROR_NOT_SUPPORTED);
    assert_status(tidal_advise(ctx, q, 2 * MiB, TIDAL_ADVICE_READ_MOSTLY, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, q));
}

static void test_stream_ordered_free_is_reused_on_its_stream(void **state)
{
    tidal_context *ctx = *state;
    void *s = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &s));
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    void *p = NULL, *q = NULL;
    assert_ok(tidal_alloc_async(ctx, 3 * MiB, &desc, s, &p));
    assert_ok(tidal_free_async(ctx, p, s));
    assert_ok(tidal_alloc_async(ctx, 3 * MiB, &desc, s, &q));
    assert_ptr_equal(q, p);
    assert_ok(tidal_free_async(ctx, q, s));
    assert_status(tidal_free_async(ctx, q, s), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_ok(tidal_free_async(ctx, NULL, s));
    /* Unpooled memory is freed after the stream is synchronised. */
    desc.kind = TIDAL_KIND_PAGEABLE;
    assert_ok(tidal_alloc_async(ctx, 4096, &desc, s, &p));
    assert_ok(tidal_free_async(ctx, p, s));
    assert_status(tidal_alloc_async(ctx, 0, &desc, s, &p), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_null(p);
    assert_status(tidal_alloc_async(ctx, 16, &desc, s, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_stream_synchronize(ctx, s));
    uint64_t released = 0;
    assert_ok(tidal_pool_trim(ctx, &released));
    tidal_pool_stats ps = TIDAL_POOL_STATS_INIT;
    assert_ok(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, 0, &ps));
    assert_int_equal(ps.in_use_bytes, 0);
    assert_ok(tidal_stream_destroy(ctx, s));
}

static void test_clock_and_spin(void **state)
{
    tidal_context *ctx = *state;
    double t0 = 0, t1 = 0;
    assert_ok(tidal_clock(ctx, &t0));
    tidal_check c = TIDAL_CHECK_INIT;
    c.kind = TIDAL_CHECK_SPIN;
    c.seed = 2000000; /* 2 ms */
    assert_ok(tidal_check_run(ctx, &c));
    assert_ok(tidal_clock(ctx, &t1));
    assert_true(t1 - t0 >= 0.002);
    assert_true(t1 - t0 < 0.003);
    c.seed = (uint64_t)120 * 1000000000u;
    assert_status(tidal_check_run(ctx, &c), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_clock(ctx, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    /* A caller compiled against the first tidal_check (no stream field) still works. */
    c.seed = 1000;
    c.struct_size = offsetof(tidal_check, stream);
    assert_ok(tidal_check_run(ctx, &c));
}

/* Lookahead overlaps the next migration with the current kernel: the simulated clock shows a
 * pipeline shorter than transfers plus compute. */
static void test_lookahead_overlaps_transfer_and_compute(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(SIM_MIGRATION);
    void *s = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &s));
    enum { CHUNKS = 8 };
    const size_t chunk = 8 * MiB;
    void *data = harness_alloc(ctx, TIDAL_KIND_MANAGED, CHUNKS * chunk, 0);
    const uint64_t spin_ns = 200000; /* 8 MiB at 45.8 GB/s is ~183 us */
    double t0 = 0, t1 = 0;
    assert_ok(tidal_clock(ctx, &t0));
    assert_ok(harness_declare(ctx, s, data, chunk, TIDAL_ACCESS_READ, 0));
    for (int i = 0; i < CHUNKS; ++i) {
        char *cur = (char *)data + (size_t)i * chunk;
        if (i + 1 < CHUNKS)
            assert_ok(harness_declare(ctx, s, cur + chunk, chunk, TIDAL_ACCESS_READ, TIDAL_DECLARE_LOOKAHEAD));
        tidal_check c = TIDAL_CHECK_INIT;
        c.kind = TIDAL_CHECK_SPIN;
        c.seed = spin_ns;
        c.stream = s;
        assert_ok(tidal_check_run(ctx, &c));
        if (i + 1 < CHUNKS)
            assert_ok(harness_declare(ctx, s, cur + chunk, chunk, TIDAL_ACCESS_READ, 0));
    }
    assert_ok(tidal_stream_synchronize(ctx, s));
    assert_ok(tidal_clock(ctx, &t1));
    const double compute = CHUNKS * spin_ns * 1e-9;
    const double transfer = (double)(CHUNKS * chunk) / 45.8e9;
    assert_true(t1 - t0 < 0.8 * (compute + transfer));
    assert_true(t1 - t0 >= compute);
    assert_ok(tidal_free(ctx, data));
    assert_ok(tidal_stream_destroy(ctx, s));
    assert_ok(tidal_context_destroy(ctx));
}

static double prefetch_seconds(tidal_context *ctx, void *p, size_t size, int32_t device)
{
    double t0 = 0, t1 = 0;
    assert_ok(tidal_clock(ctx, &t0));
    assert_ok(tidal_prefetch(ctx, p, size, device));
    assert_ok(tidal_clock(ctx, &t1));
    return t1 - t0;
}

/* An explicit prefetch of a range whose lookahead move is still in flight (on a migration
 * stream) starts after that move: the range ends where the later call put it. */
static void test_explicit_prefetch_waits_for_the_lookahead_move_of_its_range(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(SIM_MIGRATION);
    const size_t size = 64 * MiB;
    void *probe = harness_alloc(ctx, TIDAL_KIND_MANAGED, size, 0);
    const double in = prefetch_seconds(ctx, probe, size, 0);
    const double out = prefetch_seconds(ctx, probe, size, TIDAL_DEVICE_HOST);
    void *data = harness_alloc(ctx, TIDAL_KIND_MANAGED, size, 0);
    double t0 = 0, t1 = 0;
    assert_ok(tidal_clock(ctx, &t0));
    assert_ok(harness_declare(ctx, NULL, data, size, TIDAL_ACCESS_READ, TIDAL_DECLARE_LOOKAHEAD));
    assert_ok(tidal_prefetch(ctx, data, size, TIDAL_DEVICE_HOST));
    assert_ok(tidal_clock(ctx, &t1));
    assert_true(t1 - t0 >= 0.95 * (in + out)); /* not the two moves at once */
    assert_int_equal(harness_prefetch_location(ctx, data, size), TIDAL_DEVICE_HOST);
    assert_ok(tidal_free(ctx, data));
    assert_ok(tidal_free(ctx, probe));
    assert_ok(tidal_context_destroy(ctx));
}

/* The xnack policy follows the device: managed memory where pages migrate on fault, device
 * memory where they do not (AMD XNACK off). */
static void test_xnack_policy_follows_the_device(void **state)
{
    (void)state;
    static const struct {
        const char *toml;
        tidal_kind expected;
    } cases[] = {
        {"runtime = \"sim\"\npolicies = [\"xnack\"]\n[sim]\nxnack = true\n", TIDAL_KIND_MANAGED},
        {"runtime = \"sim\"\npolicies = [\"xnack\"]\n[sim]\nxnack = false\n", TIDAL_KIND_DEVICE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        tidal_context *ctx = harness_context(cases[i].toml);
        void *p = NULL;
        assert_ok(tidal_alloc(ctx, 1 * MiB, NULL, &p));
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        assert_ok(tidal_pointer_query(ctx, p, &info));
        assert_int_equal(info.kind, cases[i].expected);
        assert_string_equal(info.placed_by, "xnack");
        /* Either way a declaration is safe and the kernel reaches the data. */
        assert_ok(harness_declare(ctx, NULL, p, 1 * MiB, TIDAL_ACCESS_READ_WRITE, 0));
        assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, p, NULL, 1 * MiB, 3, NULL, NULL));
        assert_ok(tidal_free(ctx, p));
        assert_ok(tidal_context_destroy(ctx));
    }
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declaration_migrates_once_and_coalesces),
        cmocka_unit_test(test_lookahead_moves_ahead_and_the_phase_only_waits),
        cmocka_unit_test(test_budget_evicts_written_data_by_copying_back),
        cmocka_unit_test(test_budget_drops_read_only_read_mostly_data),
        cmocka_unit_test(test_budget_with_lru_and_xnack_policies),
        cmocka_unit_test(test_budget_with_parallel_eviction),
        cmocka_unit_test(test_budget_budget_from_toml),
        cmocka_unit_test(test_protected_ranges_over_budget_are_refused_with_nothing_moved),
        HARNESS_SIM_TEST(test_memory_that_cannot_move_is_a_counted_noop),
        HARNESS_SIM_TEST(test_bad_declarations_get_clear_statuses),
        HARNESS_SIM_TEST(test_absurd_counts_are_refused_before_reading),
        HARNESS_SIM_TEST(test_advice_is_applied_remembered_and_unset),
        HARNESS_SIM_TEST(test_stream_ordered_free_is_reused_on_its_stream),
        HARNESS_SIM_TEST(test_clock_and_spin),
        cmocka_unit_test(test_lookahead_overlaps_transfer_and_compute),
        cmocka_unit_test(test_explicit_prefetch_waits_for_the_lookahead_move_of_its_range),
        cmocka_unit_test(test_xnack_policy_follows_the_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

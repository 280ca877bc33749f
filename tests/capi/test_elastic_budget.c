/* Elastic memory under tidal_declare and a device budget, on the simulated device: a
 * declaration maps and copies in what is not resident; resident chunks count against the
 * budget; eviction takes the policy chain's victims, a clean chunk unmapped with no copy, a
 * written one copied home first, and the physical chunk it frees mapped at what comes in. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)
#define CHUNK (4 * MIB)
#define CHUNKS 12
#define BUDGET (4 * CHUNK)

/* 4 MiB chunks, a budget of four of them; pools off so device memory counts what is asked. */
#define BUDGET_CONFIG                                                                                                  \
    "runtime = \"sim\"\n[elastic]\nchunk_size = \"4MiB\"\n[pool]\nenabled = false\n[migration]\nbudget = \"16MiB\"\n"

static void *elastic_alloc(tidal_context *ctx, size_t size)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_ELASTIC;
    desc.device = 0;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, &p));
    return p;
}

static tidal_migration_stats stats_of(tidal_context *ctx)
{
    tidal_migration_stats s = TIDAL_MIGRATION_STATS_INIT;
    assert_ok(tidal_migration_stats_get(ctx, 0, &s));
    return s;
}

static uint64_t resident_of(tidal_context *ctx, const void *p)
{
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, p, &info));
    return info.resident_bytes;
}

/* Resident bytes of one chunk. */
static uint64_t chunk_resident(tidal_context *ctx, const void *p)
{
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    assert_ok(tidal_range_query(ctx, p, CHUNK, &info));
    return info.resident_bytes;
}

/* Word pattern `seed` over each chunk, written by a simulated kernel after a declaration. */
static void fill_chunks(tidal_context *ctx, char *p, uint64_t seed)
{
    for (size_t i = 0; i < CHUNKS; ++i) {
        assert_ok(harness_declare(ctx, NULL, p + i * CHUNK, CHUNK, TIDAL_ACCESS_WRITE, 0));
        assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, p + i * CHUNK, NULL, CHUNK, seed + i, NULL, NULL));
    }
}

/* One epoch over every chunk: each is declared, checked against `seed` by a kernel and, when
 * `rewrite`, written with `seed + 1000`. The device never holds more than its budget. */
static void epoch(tidal_context *ctx, void *stream, char *p, uint64_t seed, int rewrite)
{
    for (size_t i = 0; i < CHUNKS; ++i) {
        char *c = p + i * CHUNK;
        assert_ok(harness_declare(ctx, stream, c, CHUNK, rewrite ? TIDAL_ACCESS_READ_WRITE : TIDAL_ACCESS_READ, 0));
        const tidal_migration_stats s = stats_of(ctx);
        if (s.resident_bytes > BUDGET)
            fail_msg("chunk %zu: %llu bytes resident over a budget of %llu", i, (unsigned long long)s.resident_bytes,
                     (unsigned long long)BUDGET);
        uint64_t wrong = 1;
        assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, c, NULL, CHUNK, seed + i, stream, &wrong));
        assert_int_equal(wrong, 0);
        if (rewrite)
            assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, c, NULL, CHUNK, seed + 1000 + i, stream, NULL));
    }
}

static void test_declare_brings_offloaded_chunks_back(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[elastic]\nchunk_size = \"4MiB\"\n[pool]\nenabled = false\n");
    const size_t size = 3 * CHUNK;
    char *p = elastic_alloc(ctx, size);
    unsigned char *host = malloc(size), *back = malloc(size);
    assert_non_null(host);
    assert_non_null(back);
    harness_fill(host, size, 77);
    assert_ok(tidal_copy(ctx, p, host, size));
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload_range(ctx, p, size, 0, NULL, &out));
    assert_int_equal(resident_of(ctx, p), 0);
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p + CHUNK, NULL, CHUNK, 0, NULL, NULL),
                  TIDAL_ERROR_ILLEGAL_ACCESS);

    /* The middle chunk only: mapped, copied in, and a kernel may touch it. */
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    assert_ok(harness_declare(ctx, stream, p + CHUNK + 8, 16, TIDAL_ACCESS_READ, 0));
    assert_int_equal(resident_of(ctx, p), CHUNK);
    assert_ok(harness_check(ctx, TIDAL_CHECK_TOUCH_WRITE, p + CHUNK, NULL, CHUNK, 0, stream, NULL));
    /* The whole range: the rest comes in too, bit-identical. */
    assert_ok(harness_declare(ctx, stream, p, size, TIDAL_ACCESS_READ, 0));
    assert_int_equal(resident_of(ctx, p), size);
    assert_ok(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, size, 0, stream, NULL));
    assert_ok(tidal_copy(ctx, back, p, size));
    assert_memory_equal(back, host, size);
    const tidal_migration_stats s = stats_of(ctx);
    assert_int_equal(s.elastic_copied_in, size);
    assert_int_equal(s.migrated_bytes, size);
    assert_int_equal(s.resident_bytes, size);
    /* Declared for the host: nothing moves (the host cannot touch elastic memory). */
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = p;
    a.size = size;
    a.device = TIDAL_DEVICE_HOST;
    assert_ok(tidal_declare(ctx, stream, &a, 1, 0));
    assert_ok(tidal_declare(ctx, stream, NULL, 0, 0));
    assert_ok(tidal_stream_destroy(ctx, stream));
    assert_ok(tidal_free(ctx, p));
    free(host);
    free(back);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_out_of_core_loop_stays_under_budget(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(BUDGET_CONFIG);
    char *p = elastic_alloc(ctx, CHUNKS * CHUNK);
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    fill_chunks(ctx, p, 100);
    assert_true(stats_of(ctx).resident_bytes <= BUDGET);
    epoch(ctx, stream, p, 100, 1);
    epoch(ctx, stream, p, 1100, 1);
    epoch(ctx, stream, p, 2100, 1);
    tidal_migration_stats s = stats_of(ctx);
    assert_true(s.resident_high_water <= BUDGET);
    assert_true(s.evictions > 0);
    assert_true(s.elastic_copied_out > 0);
    assert_int_equal(s.budget_refusals, 0);
    /* Everything back, through copies that read homes and device alike. */
    unsigned char *host = malloc(CHUNKS * CHUNK);
    assert_non_null(host);
    assert_ok(tidal_declare(ctx, stream, NULL, 0, 0));
    assert_ok(tidal_copy(ctx, host, p, CHUNKS * CHUNK));
    assert_ok(tidal_copy(ctx, p, host, CHUNKS * CHUNK));
    epoch(ctx, stream, p, 3100, 0);
    free(host);
    assert_ok(tidal_stream_destroy(ctx, stream));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_clean_chunks_leave_without_a_copy(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(BUDGET_CONFIG);
    char *p = elastic_alloc(ctx, CHUNKS * CHUNK);
    fill_chunks(ctx, p, 5);
    epoch(ctx, NULL, p, 5, 0); /* the chunks written last leave with a copy, the rest came in read-only */
    const tidal_migration_stats before = stats_of(ctx);
    epoch(ctx, NULL, p, 5, 0); /* every chunk resident at its start came in read-only */
    const tidal_migration_stats after = stats_of(ctx);
    assert_int_equal(after.elastic_copied_out, before.elastic_copied_out);
    assert_int_equal(after.evicted_bytes, before.evicted_bytes);
    assert_int_equal(after.dropped_bytes - before.dropped_bytes, CHUNKS * CHUNK);
    assert_int_equal(after.elastic_copied_in - before.elastic_copied_in, CHUNKS * CHUNK);
    /* Written once more: those chunks go home with a copy. */
    epoch(ctx, NULL, p, 5, 1);
    assert_true(stats_of(ctx).elastic_copied_out > after.elastic_copied_out);
    epoch(ctx, NULL, p, 1005, 0);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

/* Evictions hand their physical chunks to what comes in: past the allocation, no chunk is
 * created (a 13th vmm_create fails). */
static void test_evicted_physical_chunks_are_mapped_again(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(BUDGET_CONFIG "[[sim.fault]]\noperation = \"vmm_create\"\nnth = 13\n"
                                                      "error = \"hipErrorOutOfMemory\"\n");
    char *p = elastic_alloc(ctx, CHUNKS * CHUNK);
    fill_chunks(ctx, p, 9);
    epoch(ctx, NULL, p, 9, 1);
    epoch(ctx, NULL, p, 1009, 0);
    epoch(ctx, NULL, p, 1009, 1);
    /* The first declaration took the device down to its budget: 8 chunks left for good. */
    const tidal_migration_stats s = stats_of(ctx);
    assert_int_equal(s.elastic_offloads - s.elastic_restores, CHUNKS - BUDGET / CHUNK);
    assert_ok(tidal_free(ctx, p));
    /* The fault is still armed: the next chunk made is the 13th. */
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_ELASTIC;
    void *q = NULL;
    assert_status(tidal_alloc(ctx, CHUNK, &desc, &q), TIDAL_ERROR_OUT_OF_MEMORY);
    assert_ok(tidal_context_destroy(ctx));
}

/* Elastic memory of `size` bytes written with pattern `seed` (kept in `host`) and offloaded
 * whole, in a context made from `config`; `back` takes copies to compare. */
typedef struct {
    tidal_context *ctx;
    char *p;
    size_t size;
    unsigned char *host, *back;
} offloaded_memory;

static offloaded_memory offloaded(const char *config, size_t size, unsigned seed)
{
    offloaded_memory m = {harness_context(config), NULL, size, malloc(size), malloc(size)};
    assert_non_null(m.host);
    assert_non_null(m.back);
    m.p = elastic_alloc(m.ctx, size);
    harness_fill(m.host, size, seed);
    assert_ok(tidal_copy(m.ctx, m.p, m.host, size));
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload_range(m.ctx, m.p, size, 0, NULL, &out));
    return m;
}

/* Every byte reads back as written. */
static void assert_intact(offloaded_memory *m)
{
    assert_ok(tidal_copy(m->ctx, m->back, m->p, m->size));
    assert_memory_equal(m->back, m->host, m->size);
}

static void offloaded_free(offloaded_memory *m)
{
    free(m->host);
    free(m->back);
    assert_ok(tidal_free(m->ctx, m->p));
    assert_ok(tidal_context_destroy(m->ctx));
}

#define FOUR_MIB_CHUNKS "runtime = \"sim\"\n[elastic]\nchunk_size = \"4MiB\"\n[pool]\nenabled = false\n"
/* Two chunks, room for one: the second's declaration evicts the first. */
#define ONE_CHUNK_BUDGET FOUR_MIB_CHUNKS "[migration]\nbudget = \"4MiB\"\n"

/* Chunks come in by groups (1, 2, 4 ...), each mapped and its copy queued before the next
 * group's driver calls: when the second chunk's map fails, the first is already in, intact, and
 * the rest are still offloaded with their homes; declaring again brings them in. */
static void test_declaration_maps_and_copies_chunk_by_chunk(void **state)
{
    (void)state;
    /* The allocation maps its 4 chunks (maps 1-4); the declaration's second map is the 6th. */
    offloaded_memory m = offloaded(FOUR_MIB_CHUNKS "[[sim.fault]]\noperation = \"vmm_map\"\nnth = 6\nerror = \"hipErrorOutOfMemory\"\n",
                                   4 * CHUNK, 31);
    char *p = m.p;
    assert_int_equal(resident_of(m.ctx, p), 0);
    /* The move runs on tidal's worker: its error comes back from what waits for it. */
    assert_ok(harness_declare(m.ctx, NULL, p, m.size, TIDAL_ACCESS_READ, 0));
    assert_status(harness_check(m.ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, CHUNK, 0, NULL, NULL), TIDAL_ERROR_OUT_OF_MEMORY);
    assert_int_equal(chunk_resident(m.ctx, p), CHUNK);
    assert_int_equal(resident_of(m.ctx, p), CHUNK);
    assert_ok(harness_check(m.ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, CHUNK, 0, NULL, NULL));
    assert_status(harness_check(m.ctx, TIDAL_CHECK_TOUCH_READ, p + CHUNK, NULL, CHUNK, 0, NULL, NULL),
                  TIDAL_ERROR_ILLEGAL_ACCESS);
    assert_ok(harness_declare(m.ctx, NULL, p, m.size, TIDAL_ACCESS_READ, 0));
    assert_int_equal(resident_of(m.ctx, p), m.size);
    assert_intact(&m);
    offloaded_free(&m);
}

/* Chunk 0 declared and read, with room for it alone: declaring chunk 1 next evicts it. */
static void first_chunk_in(offloaded_memory *m)
{
    assert_ok(harness_declare(m->ctx, NULL, m->p, CHUNK, TIDAL_ACCESS_READ, 0));
    assert_ok(harness_check(m->ctx, TIDAL_CHECK_TOUCH_READ, m->p, NULL, CHUNK, 0, NULL, NULL));
}

/* An incoming chunk is mapped at its victim's physical chunk, and copied into, before the
 * victim is unmapped: the unmap is off the path to the copy. When that unmap fails, the chunk
 * that came in stays in, intact, and the victim, whose device memory now holds the other,
 * has left (its home is current). */
static void test_victim_unmapped_after_the_copy_in(void **state)
{
    (void)state;
    /* The offload unmaps its two chunks one by one; the victim's unmap is the third. */
    offloaded_memory m = offloaded(ONE_CHUNK_BUDGET "[[sim.fault]]\noperation = \"vmm_unmap\"\nnth = 3\nerror = \"hipErrorOutOfMemory\"\n",
                                   2 * CHUNK, 41);
    char *p = m.p;
    first_chunk_in(&m);
    assert_ok(harness_declare(m.ctx, NULL, p + CHUNK, CHUNK, TIDAL_ACCESS_READ, 0));
    /* The move runs on tidal's worker: its error comes back from what waits for it. */
    assert_status(harness_check(m.ctx, TIDAL_CHECK_TOUCH_READ, p + CHUNK, NULL, CHUNK, 0, NULL, NULL),
                  TIDAL_ERROR_OUT_OF_MEMORY);
    assert_int_equal(chunk_resident(m.ctx, p + CHUNK), CHUNK);
    assert_int_equal(chunk_resident(m.ctx, p), 0);
    assert_ok(harness_check(m.ctx, TIDAL_CHECK_TOUCH_READ, p + CHUNK, NULL, CHUNK, 0, NULL, NULL));
    assert_intact(&m);
    /* The victim comes back where it was, from its home. */
    first_chunk_in(&m);
    assert_intact(&m);
    offloaded_free(&m);
}

/* A runtime that refuses to map a victim's memory at a second place while the victim is still
 * mapped (the simulated device allows it: the refusal is injected) gets the victim unmapped
 * first and the map tried again: the move succeeds, nothing is reported, the data are intact. */
static void test_refused_second_mapping_unmaps_the_victim_first(void **state)
{
    (void)state;
    /* The allocation maps its two chunks (maps 1-2), the first declaration chunk 0 (map 3); the
     * second declaration's map of chunk 1 at chunk 0's memory is the 4th. */
    offloaded_memory m = offloaded(ONE_CHUNK_BUDGET "[[sim.fault]]\noperation = \"vmm_map\"\nnth = 4\nerror = \"hipErrorInvalidValue\"\n",
                                   2 * CHUNK, 43);
    char *p = m.p;
    first_chunk_in(&m);
    const tidal_migration_stats before = stats_of(m.ctx);
    assert_ok(harness_declare(m.ctx, NULL, p + CHUNK, CHUNK, TIDAL_ACCESS_READ, 0));
    assert_ok(harness_check(m.ctx, TIDAL_CHECK_TOUCH_READ, p + CHUNK, NULL, CHUNK, 0, NULL, NULL));
    assert_int_equal(chunk_resident(m.ctx, p + CHUNK), CHUNK);
    assert_int_equal(chunk_resident(m.ctx, p), 0);
    assert_int_equal(stats_of(m.ctx).elastic_copied_in - before.elastic_copied_in, CHUNK);
    assert_intact(&m);
    offloaded_free(&m);
}

/* lru takes clean chunks first, however recently used; the core's default takes the oldest. */
static void lru_order(const char *policies, int clean_first)
{
    tidal_context *ctx = harness_context_format("runtime = \"sim\"\npolicies = [%s]\n[elastic]\nchunk_size = \"4MiB\"\n"
                                                "[pool]\nenabled = false\n[migration]\nbudget = \"8MiB\"\n",
                                                policies);
    char *p = elastic_alloc(ctx, 3 * CHUNK);
    char *c0 = p, *c1 = p + CHUNK, *c2 = p + 2 * CHUNK;
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload_range(ctx, c2, CHUNK, 0, NULL, &out)); /* c0 and c1 fill the budget */
    assert_ok(tidal_offload_range(ctx, c1, CHUNK, 0, NULL, &out));
    assert_ok(tidal_restore_range(ctx, c1, CHUNK, TIDAL_RESTORE_READ_ONLY, NULL, &out));
    assert_ok(harness_declare(ctx, NULL, c0, CHUNK, TIDAL_ACCESS_READ_WRITE, 0)); /* c0: written */
    assert_ok(harness_declare(ctx, NULL, c1, CHUNK, TIDAL_ACCESS_READ, 0));       /* c1: clean, used last */
    assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
    const tidal_migration_stats before = stats_of(ctx);
    assert_ok(harness_declare(ctx, NULL, c2, CHUNK, TIDAL_ACCESS_READ, 0));
    const tidal_migration_stats after = stats_of(ctx);
    assert_int_equal(chunk_resident(ctx, c2), CHUNK);
    if (clean_first) {
        assert_int_equal(chunk_resident(ctx, c1), 0);
        assert_int_equal(chunk_resident(ctx, c0), CHUNK);
        assert_int_equal(after.dropped_bytes - before.dropped_bytes, CHUNK);
        assert_int_equal(after.elastic_copied_out, before.elastic_copied_out);
    } else {
        assert_int_equal(chunk_resident(ctx, c0), 0);
        assert_int_equal(chunk_resident(ctx, c1), CHUNK);
        assert_int_equal(after.evicted_bytes - before.evicted_bytes, CHUNK);
        assert_int_equal(after.elastic_copied_out - before.elastic_copied_out, CHUNK);
    }
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_lru_evicts_clean_chunks_first(void **state)
{
    (void)state;
    lru_order("\"lru\"", 1);
    lru_order("", 0);
}

/* xnack puts AUTO GPU buffers in elastic memory under a budget where pages do not migrate; the
 * budget then moves them. */
static void test_xnack_elastic_buffers_move_under_the_budget(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\npolicies = [\"xnack\", \"lru\"]\n[sim]\nxnack = false\n"
                                         "[elastic]\nchunk_size = \"4MiB\"\n[pool]\nenabled = false\n"
                                         "[migration]\nbudget = \"16MiB\"\n");
    char *buffers[3];
    for (int b = 0; b < 3; ++b) {
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.device = 0;
        assert_ok(tidal_alloc(ctx, 4 * CHUNK, &desc, (void **)&buffers[b]));
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        assert_ok(tidal_pointer_query(ctx, buffers[b], &info));
        assert_int_equal(info.kind, TIDAL_KIND_ELASTIC);
    }
    for (int round = 0; round < 3; ++round)
        for (int b = 0; b < 3; ++b) {
            assert_ok(harness_declare(ctx, NULL, buffers[b], 4 * CHUNK, TIDAL_ACCESS_READ_WRITE, 0));
            assert_true(stats_of(ctx).resident_bytes <= BUDGET);
            assert_int_equal(resident_of(ctx, buffers[b]), 4 * CHUNK);
            uint64_t wrong = 1;
            if (round > 0) {
                assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, buffers[b], NULL, 4 * CHUNK,
                                        (uint64_t)(round * 10 + b), NULL, &wrong));
                assert_int_equal(wrong, 0);
            }
            assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, buffers[b], NULL, 4 * CHUNK,
                                    (uint64_t)((round + 1) * 10 + b), NULL, NULL));
        }
    assert_true(stats_of(ctx).elastic_copied_out > 0);
    for (int b = 0; b < 3; ++b)
        assert_ok(tidal_free(ctx, buffers[b]));
    assert_ok(tidal_context_destroy(ctx));
}

/* A chunk one declaration names for reading and, in another entry, for writing was written:
 * it goes home with a copy. */
static void test_read_and_write_entries_make_a_chunk_dirty(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[elastic]\nchunk_size = \"4MiB\"\n[pool]\nenabled = false\n"
                                         "[migration]\nbudget = \"4MiB\"\n");
    char *p = elastic_alloc(ctx, 2 * CHUNK);
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload_range(ctx, p, 2 * CHUNK, 0, NULL, &out));
    tidal_access a[2] = {TIDAL_ACCESS_INIT, TIDAL_ACCESS_INIT};
    a[0].ptr = p;
    a[0].size = 64;
    a[0].mode = TIDAL_ACCESS_READ;
    a[0].device = a[1].device = 0;
    a[1].ptr = p + CHUNK / 2;
    a[1].size = 64;
    a[1].mode = TIDAL_ACCESS_WRITE;
    assert_ok(tidal_declare(ctx, NULL, a, 2, 0));
    assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
    const uint64_t before = stats_of(ctx).elastic_copied_out;
    assert_ok(harness_declare(ctx, NULL, p + CHUNK, CHUNK, TIDAL_ACCESS_READ, 0));
    assert_int_equal(chunk_resident(ctx, p), 0);
    assert_int_equal(stats_of(ctx).elastic_copied_out - before, CHUNK);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_bad_declarations(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 2\n[elastic]\nchunk_size = \"4MiB\"\n"
                                         "[migration]\nbudget = \"4MiB\"\n");
    char *p = elastic_alloc(ctx, 2 * CHUNK);
    /* Elastic memory is mapped on its own device only. */
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = p;
    a.size = CHUNK;
    a.device = 1;
    assert_status(tidal_declare(ctx, NULL, &a, 1, 0), TIDAL_ERROR_NOT_SUPPORTED);
    assert_true(harness_contains(tidal_last_error(), "device 0", 0));
    /* More than the budget in one declaration: refused, nothing moved. */
    assert_status(harness_declare(ctx, NULL, p, 2 * CHUNK, TIDAL_ACCESS_READ, 0), TIDAL_ERROR_BUDGET_EXCEEDED);
    assert_ok(harness_declare(ctx, NULL, p, CHUNK, TIDAL_ACCESS_READ, 0));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declare_brings_offloaded_chunks_back),
        cmocka_unit_test(test_out_of_core_loop_stays_under_budget),
        cmocka_unit_test(test_clean_chunks_leave_without_a_copy),
        cmocka_unit_test(test_evicted_physical_chunks_are_mapped_again),
        cmocka_unit_test(test_declaration_maps_and_copies_chunk_by_chunk),
        cmocka_unit_test(test_victim_unmapped_after_the_copy_in),
        cmocka_unit_test(test_refused_second_mapping_unmaps_the_victim_first),
        cmocka_unit_test(test_lru_evicts_clean_chunks_first),
        cmocka_unit_test(test_xnack_elastic_buffers_move_under_the_budget),
        cmocka_unit_test(test_read_and_write_entries_make_a_chunk_dirty),
        cmocka_unit_test(test_bad_declarations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

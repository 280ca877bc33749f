"""The newest part of the API: stream-ordered alloc/free, advice, access declarations, budgets,
migration statistics and the runtime clock. These fail (NotSupportedError naming the library)
against a libtidal built before those functions: that is a failure, not a skip, on purpose."""
import ctypes

import pytest
import tidal

from conftest import MiB, sim_config


def fill(a, seed):
    data = bytes((i * 7 + seed) & 0xFF for i in range(256)) * (a.size // 256)
    a.view()[:] = data  # touched by the host: managed pages start out resident there
    return data


# ----------------------------------------------------------------------------- alloc_async
def test_alloc_async_on_the_default_stream(ctx):
    a = ctx.alloc_async(MiB, kind="device", tag="async")
    assert a.stream is None
    a.write(b"\xab" * MiB)
    assert a.read() == b"\xab" * MiB
    info = ctx.query(a)
    assert info.size == MiB and info.kind == tidal.Kind.DEVICE and info.tag == "async"
    a.free_async()
    assert a.freed
    ctx.stream_synchronize()


def test_alloc_async_on_a_stream_reuses_the_pool(ctx):
    stream = ctx.stream_create(0)
    try:
        a = ctx.alloc_async(4 * MiB, stream=stream, kind="device")
        assert a.stream == stream
        runtime_calls = ctx.pool_stats("device").runtime_allocations
        a.free_async()  # on the stream it was allocated on
        b = ctx.alloc_async(4 * MiB, stream=stream, kind="device")
        b.write(b"\x01" * b.size)
        assert ctx.pool_stats("device").runtime_allocations == runtime_calls
        b.free_async(stream)
        ctx.stream_synchronize(stream)
        stats = ctx.pool_stats("device")
        assert stats.allocations == 2 and stats.frees == 2
    finally:
        ctx.stream_destroy(stream)


def test_free_async_of_unpooled_memory_returns_it():
    with tidal.Context(sim_config('[sim]\ncapacity = "1GiB"\n[pool]\nenabled = false\n')) as ctx:
        free = ctx.device_info(0).free_memory
        a = ctx.alloc_async(128 * MiB, kind="device")
        assert ctx.device_info(0).free_memory == free - 128 * MiB
        ctx.free_async(a)
        assert ctx.device_info(0).free_memory == free


def test_free_async_errors_are_those_of_free(ctx):
    a = ctx.alloc_async(MiB, kind="device")
    with pytest.raises(tidal.InvalidArgumentError, match="interior pointer"):
        ctx.free_async(a.address + 64)
    address = a.address
    ctx.free_async(address)
    with pytest.raises(tidal.UnknownPointerError):
        ctx.free_async(address)
    ctx.free_async(None)  # NULL does nothing
    foreign = ctypes.create_string_buffer(64)
    with pytest.raises(tidal.UnknownPointerError):
        ctx.free_async(ctypes.addressof(foreign))


def test_alloc_async_argument_checks(ctx):
    with pytest.raises(tidal.InvalidArgumentError, match="tidal_alloc_async: size is 0"):
        ctx.alloc_async(0)
    with pytest.raises(tidal.InvalidArgumentError, match="alignment"):
        ctx.alloc_async(64, alignment=3)
    with pytest.raises(tidal.OutOfMemoryError, match="tidal_alloc_async"):
        ctx.alloc_async(1 << 60, kind="device")


# ----------------------------------------------------------------------------- advice
def test_advise_sets_and_clears_advice(ctx):
    with ctx.alloc(4 * MiB, kind="managed") as a:
        ctx.advise(a, set=tidal.Advice.READ_MOSTLY)
        assert ctx.query(a).advice & tidal.Advice.READ_MOSTLY
        assert ctx.range_query(a).read_mostly
        ctx.advise(a, unset=tidal.Advice.READ_MOSTLY)
        assert not ctx.query(a).advice & tidal.Advice.READ_MOSTLY
        assert not ctx.range_query(a).read_mostly
        ctx.advise(a, set=tidal.Advice.PREFERRED_DEVICE)
        assert ctx.range_query(a).preferred_location == 0
        ctx.advise(a.address + MiB, MiB, set=tidal.Advice.ACCESSED_BY_DEVICE)  # a part of it


def test_advice_on_memory_that_takes_none_is_a_noop(ctx):
    with ctx.alloc(MiB, kind="device") as a:
        ctx.advise(a, set=tidal.Advice.READ_MOSTLY)
        assert ctx.query(a).advice == tidal.Advice.NONE


def test_advise_errors(ctx):
    with ctx.alloc(MiB, kind="managed") as a:
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.advise(a, set=tidal.Advice.READ_MOSTLY, unset=tidal.Advice.READ_MOSTLY)
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.advise(a, set=0x100)
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.advise(a, 2 * MiB, set=tidal.Advice.READ_MOSTLY)
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.advise(a, 0, set=tidal.Advice.READ_MOSTLY)
        with pytest.raises(tidal.NotSupportedError):
            ctx.advise(a, set=tidal.Advice.COARSE_GRAIN)  # an NVIDIA profile
    foreign = ctypes.create_string_buffer(64)
    with pytest.raises(tidal.UnknownPointerError):
        ctx.advise(ctypes.addressof(foreign), 64, set=tidal.Advice.READ_MOSTLY)


# ----------------------------------------------------------------------------- declarations
def test_declare_makes_managed_memory_resident(ctx):
    with ctx.alloc(8 * MiB, kind="managed") as a:
        data = fill(a, 3)
        before = ctx.migration_stats(0)
        ctx.declare(None, [tidal.AccessRange(a, a.size, 0, tidal.Access.READ)])
        ctx.stream_synchronize()
        after = ctx.migration_stats(0)
        assert after.declared_ranges == before.declared_ranges + 1
        assert after.migrated_bytes >= before.migrated_bytes + 8 * MiB
        assert after.resident_bytes >= 8 * MiB
        assert after.migration_calls > before.migration_calls
        assert ctx.range_query(a).last_prefetch_location == 0
        ctx.declare(None, [])  # ends the phase
        assert a.read() == data


def test_declare_of_memory_that_cannot_move_is_counted(ctx):
    with ctx.alloc(MiB, kind="device") as d, ctx.alloc(MiB, kind="pinned") as p:
        before = ctx.migration_stats(0).noops
        ctx.declare(None, [(d, d.size), (p, p.size, 0, tidal.Access.READ_WRITE)])
        assert ctx.migration_stats(0).noops >= before + 2
        assert ctx.migration_stats(0).migrated_bytes == 0


def test_lookahead_moves_once(ctx):
    stream = ctx.stream_create(0)
    try:
        with ctx.alloc(8 * MiB, kind="managed") as a:
            fill(a, 5)
            before = ctx.migration_stats(0).migrated_bytes
            ctx.declare(stream, [(a, a.size)], lookahead=True)
            ctx.declare(stream, [(a, a.size)])  # only waits for the lookahead's migration
            ctx.stream_synchronize(stream)
            assert ctx.migration_stats(0).migrated_bytes - before == 8 * MiB
            ctx.declare(stream, [])
    finally:
        ctx.stream_destroy(stream)


def test_budget_refuses_a_declaration_that_cannot_fit(ctx):
    ctx.budget_set(0, 4 * MiB)
    assert ctx.migration_stats(0).budget == 4 * MiB
    with ctx.alloc(8 * MiB, kind="managed") as a:
        fill(a, 1)
        with pytest.raises(tidal.BudgetExceededError) as info:
            ctx.declare(None, [(a, a.size)])
        assert info.value.status == 9
        stats = ctx.migration_stats(0)
        assert stats.budget_refusals == 1
        assert stats.migrated_bytes == 0  # nothing of the declaration was moved


def test_budget_evicts_the_previous_phase():
    with tidal.Context(sim_config("[pool]\nenabled = false\n")) as ctx:
        ctx.budget_set(0, 8 * MiB)
        a = ctx.alloc(6 * MiB, kind="managed")
        b = ctx.alloc(6 * MiB, kind="managed")
        data_a, data_b = fill(a, 11), fill(b, 12)
        ctx.declare(None, [(a, a.size, 0, tidal.Access.READ_WRITE)])
        ctx.stream_synchronize()
        ctx.declare(None, [(b, b.size, 0, tidal.Access.READ_WRITE)])
        ctx.stream_synchronize()
        stats = ctx.migration_stats(0)
        assert stats.evictions >= 1
        assert stats.evicted_bytes + stats.dropped_bytes > 0
        assert stats.resident_bytes <= 8 * MiB
        assert stats.resident_high_water <= 8 * MiB
        assert a.read() == data_a and b.read() == data_b  # eviction keeps the data
        ctx.declare(None, [])
        a.free()
        b.free()


def test_budget_from_the_configuration():
    with tidal.Context(sim_config('[migration]\nbudget = "64MiB"\n')) as ctx:
        assert ctx.migration_stats(0).budget == 64 * MiB
        ctx.budget_set(0, 0)
        assert ctx.migration_stats(0).budget == 0


def test_declare_errors(ctx):
    with ctx.alloc(MiB, kind="managed") as a:
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.declare(None, [(a, 2 * MiB)])
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.declare(None, [(a, a.size, 0, 0x4)])
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.declare(None, [(a, 0)])
        with pytest.raises(tidal.NotFoundError):
            ctx.declare(None, [(a, a.size, 9)])
    foreign = ctypes.create_string_buffer(64)
    with pytest.raises(tidal.UnknownPointerError):
        ctx.declare(None, [(ctypes.addressof(foreign), 64)])
    ctx.declare(None, [])


def test_migration_errors(ctx):
    with pytest.raises(tidal.NotFoundError):
        ctx.budget_set(9, MiB)
    with pytest.raises(tidal.NotFoundError):
        ctx.migration_stats(9)


def test_prefetch_counts_toward_the_budget(ctx):
    ctx.budget_set(0, 4 * MiB)
    with ctx.alloc(4 * MiB, kind="managed") as a, ctx.alloc(4 * MiB, kind="managed") as b:
        fill(a, 1)
        fill(b, 2)
        ctx.prefetch(a, device=0)
        ctx.prefetch(b, device=0)  # evicts a first
        stats = ctx.migration_stats(0)
        assert stats.resident_bytes <= 4 * MiB
        assert stats.evictions >= 1


# ----------------------------------------------------------------------------- clock
def test_clock_advances_with_simulated_work(ctx):
    with ctx.alloc(64 * MiB, kind="pinned") as src, ctx.alloc(64 * MiB, kind="device") as dst:
        t0 = ctx.clock()
        assert t0 >= 0.0
        ctx.copy(dst, src)
        t1 = ctx.clock()
    # 64 MiB over the simulated H200's 55 GB/s pinned link takes about 1.2 ms; even a link
    # ten times faster would take 0.1 ms.
    assert t1 - t0 >= 64 * MiB / 550e9

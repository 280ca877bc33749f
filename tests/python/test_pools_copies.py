"""Pools, copies, registered memory, streams, prefetch and the validation kernels."""
import array
import ctypes

import pytest
import tidal

from conftest import MiB, sim_config


def test_pool_stats_follow_alloc_and_free(ctx):
    before = ctx.pool_stats(tidal.Kind.DEVICE, 0)
    assert before.allocations == 0 and before.reserved_bytes == 0
    a = ctx.alloc(4 * MiB, kind="device")
    during = ctx.pool_stats("device")
    assert during.allocations == 1
    assert during.in_use_bytes >= 4 * MiB
    assert during.reserved_bytes >= 4 * MiB
    assert during.runtime_allocations >= 1
    a.free()
    after = ctx.pool_stats("device")
    assert after.frees == 1
    assert after.in_use_high_water >= 4 * MiB
    assert after.reserved_bytes == during.reserved_bytes  # kept for reuse until trimmed
    b = ctx.alloc(4 * MiB, kind="device")
    assert ctx.pool_stats("device").runtime_allocations == during.runtime_allocations  # reused
    b.free()


def test_pool_trim_returns_memory(ctx):
    ctx.alloc(8 * MiB, kind="device").free()
    reserved = ctx.pool_stats("device").reserved_bytes
    assert reserved >= 8 * MiB
    assert ctx.pool_trim() >= reserved
    assert ctx.pool_stats("device").reserved_bytes == 0
    assert ctx.pool_trim() == 0


def test_pinned_pool_is_the_hosts(ctx):
    with ctx.alloc(MiB, kind="pinned"):
        assert ctx.pool_stats("pinned").allocations == 1  # device defaults to DEVICE_HOST
        assert ctx.pool_stats(tidal.Kind.PINNED, tidal.DEVICE_HOST).in_use_bytes >= MiB


def test_pool_stats_errors(ctx):
    with pytest.raises(tidal.InvalidArgumentError, match="has no pool"):
        ctx.pool_stats(tidal.Kind.AUTO)
    with pytest.raises(tidal.InvalidArgumentError):
        ctx.pool_stats(tidal.Kind.PAGEABLE)
    with pytest.raises(tidal.NotFoundError, match="device 5"):
        ctx.pool_stats("device", 5)


def test_unpooled_allocations():
    with tidal.Context(sim_config("[pool]\nenabled = false\n")) as ctx:
        ctx.alloc(MiB, kind="device").free()
        assert ctx.pool_stats("device").reserved_bytes == 0


@pytest.mark.parametrize("kind", ["device", "managed", "pinned", "pageable"])
def test_copy_between_buffers_and_allocations(ctx, kind):
    data = bytes(range(256)) * 4096  # 1 MiB
    with ctx.alloc(len(data), kind=kind) as a, ctx.alloc(len(data), kind="device") as b:
        ctx.copy(a, data)                    # size from the buffers
        ctx.copy(b, a)                       # allocation to allocation
        out = bytearray(len(data))
        ctx.copy(out, b.address, len(data))  # an int address needs a size
        assert out == data
        ints = array.array("Q", range(1000))
        ctx.copy(a, ints)
        back = array.array("Q", bytes(8000))
        ctx.copy(back, a)
        assert back == ints
        view = memoryview(out)[10:20]
        ctx.copy(view, a.address + 8, 10)
        assert bytes(out[10:20]) == a.read(10, offset=8)


def test_copy_async_on_a_stream(ctx):
    stream = ctx.stream_create(0)
    try:
        with ctx.alloc(MiB, kind="device") as a:
            src = b"\x5a" * MiB
            ctx.copy_async(a, src, stream=stream)
            out = bytearray(MiB)
            ctx.copy_async(out, a, stream=stream)
            ctx.stream_synchronize(stream)
            assert out == src
    finally:
        ctx.stream_destroy(stream)
    ctx.stream_synchronize()  # the default stream
    ctx.stream_destroy(None)


def test_stream_forget_gives_back_what_the_stream_held():
    ctx = tidal.Context('runtime = "sim"\n[pool]\nrelease_threshold = 0\n')
    try:
        s1, s2 = ctx.stream_create(0), ctx.stream_create(0)
        ctx.alloc_async(16 * MiB, stream=s1, kind="device").free_async(s1)
        ctx.alloc_async(16 * MiB, stream=s2, kind="device").free_async(s2)
        ctx.stream_forget(s1)
        ctx.stream_forget(s2)
        ctx.stream_forget(None)
        ctx.pool_trim()
        assert ctx.pool_stats(tidal.Kind.DEVICE, 0).reserved_bytes == 0
        ctx.stream_destroy(s1)
        ctx.stream_destroy(s2)
    finally:
        ctx.close()


def test_copy_batch(ctx):
    with ctx.alloc(MiB, kind="device") as d, ctx.alloc(MiB, kind="pinned") as h:
        chunks = [bytes([i]) * 4096 for i in range(64)]
        ctx.copy_batch((d.address + (63 - i) * 8192, chunk) for i, chunk in enumerate(chunks))
        outs = [bytearray(4096) for _ in range(64)]
        stream = ctx.stream_create(0)
        try:
            ctx.copy_batch([(out, d.address + (63 - i) * 8192, 4096) for i, out in enumerate(outs)],
                           stream=stream)
            ctx.stream_synchronize(stream)
        finally:
            ctx.stream_destroy(stream)
        assert [bytes(o) for o in outs] == chunks
        ctx.copy_batch([(h, d)])  # allocation to allocation, size from both
        assert h.read(4096, offset=63 * 8192) == chunks[0]
        ctx.copy_batch([])
        with pytest.raises(tidal.InvalidArgumentError, match="items 0 and 1 have overlapping destinations"):
            ctx.copy_batch([(d.address, b"ab"), (d.address + 1, b"cd")])
        with pytest.raises(tidal.InvalidArgumentError, match="item 0 is not"):
            ctx.copy_batch([(d,)])


def test_copy_errors(ctx):
    with ctx.alloc(4096, kind="pinned") as a:
        with pytest.raises(tidal.InvalidArgumentError, match="read-only"):
            ctx.copy(b"immutable", a)
        with pytest.raises(tidal.InvalidArgumentError, match="larger than"):
            ctx.copy(a, b"x" * 16, 32)
        with pytest.raises(tidal.InvalidArgumentError, match="size is needed"):
            ctx.copy(a.address, a.address + 8)
        with pytest.raises(tidal.InvalidArgumentError, match="NULL"):
            ctx.copy(None, a, 16)
        with pytest.raises(TypeError, match="buffer"):
            ctx.copy(a, object())
    ctx.copy(bytearray(0), b"")  # size 0 does nothing


def test_registered_memory(ctx):
    buf = bytearray(2 * MiB)
    address = ctx.register(buf)
    assert address == ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
    with ctx.alloc(len(buf), kind="device") as a:
        a.write(b"\x11" * len(buf))
        ctx.copy(buf, a)
        assert buf == b"\x11" * len(buf)
    ctx.unregister(buf)
    with pytest.raises(tidal.UnknownPointerError, match="not the start of a registered range"):
        ctx.unregister(address)
    with pytest.raises(tidal.InvalidArgumentError):
        ctx.register(address, 0)


def test_prefetch_moves_managed_memory(ctx):
    size = 8 * MiB
    with ctx.alloc(size, kind="managed") as a:
        ctx.check(tidal.CheckKind.PATTERN_FILL, a, seed=42)
        for where in (tidal.DEVICE_HOST, 0, tidal.DEVICE_HOST, 0):
            ctx.prefetch(a, device=where)
            assert ctx.range_query(a).last_prefetch_location == where
            assert ctx.check(tidal.CheckKind.PATTERN_VERIFY, a, seed=42).result == 0
        ctx.prefetch(a.address + MiB, MiB, device=tidal.DEVICE_HOST)  # part of it
        assert ctx.range_query(a.address + MiB, MiB).last_prefetch_location == tidal.DEVICE_HOST


def test_prefetch_of_memory_that_cannot_move(ctx):
    with ctx.alloc(MiB, kind="device") as a:
        ctx.prefetch(a, device=0)  # a counted no-op
        with pytest.raises(tidal.NotSupportedError, match="managed"):
            ctx.range_query(a)


def test_prefetch_errors(ctx):
    with ctx.alloc(MiB, kind="managed") as a:
        with pytest.raises(tidal.InvalidArgumentError):
            ctx.prefetch(a, 2 * MiB, device=0)
        with pytest.raises(tidal.NotFoundError):
            ctx.prefetch(a, device=7)
    foreign = ctypes.create_string_buffer(64)
    with pytest.raises(tidal.UnknownPointerError):
        ctx.prefetch(ctypes.addressof(foreign), 64, device=0)


def test_validation_kernels(ctx):
    with ctx.alloc(MiB, kind="device") as a, ctx.alloc(MiB, kind="device") as b:
        ctx.check(tidal.CheckKind.PATTERN_FILL, a, seed=7)
        assert ctx.check(tidal.CheckKind.PATTERN_VERIFY, a, seed=7).result == 0
        assert ctx.check(tidal.CheckKind.PATTERN_VERIFY, a, seed=8).result == MiB // 8
        r = ctx.check(tidal.CheckKind.COPY, b, source=a, repeat=2)
        assert r.elapsed_ms > 0
        assert b.read() == a.read()
    with pytest.raises(tidal.InvalidArgumentError):
        ctx.check(tidal.CheckKind.PATTERN_FILL, 0, 4096)


def test_pageable_memory_from_the_device_is_an_illegal_access():
    # The simulated H200 has no HMM: a kernel touching malloc memory faults, as on the card.
    with tidal.Context(sim_config()) as ctx:
        if ctx.device_info(0).flags & tidal.DeviceFlag.PAGEABLE_ACCESS:
            pytest.fail("the h200 profile should not reach pageable memory")
        with ctx.alloc(MiB, kind="pageable") as a:
            with pytest.raises(tidal.IllegalAccessError):
                ctx.check(tidal.CheckKind.TOUCH_READ, a)


def test_system_and_device_info(ctx):
    system = ctx.system_info()
    assert system.runtime == "sim"
    assert "simulated" in system.runtime_detail
    assert system.device_count == 1
    dev = ctx.device_info(0)
    assert dev.index == 0
    assert dev.simulated and dev.flags & tidal.DeviceFlag.SIMULATED
    assert dev.flags & tidal.DeviceFlag.MANAGED
    assert "H200" in dev.name and dev.arch == "sm_90"
    assert dev.total_memory > 100 << 30 and 0 < dev.free_memory <= dev.total_memory
    assert dev.page_size == 2 * MiB and dev.l2_size > 0
    assert dev.xnack == tidal.Xnack.NOT_APPLICABLE and dev.numa_node == -1
    assert ctx.devices() == [dev]
    with pytest.raises(tidal.NotFoundError, match="device 3 does not exist"):
        ctx.device_info(3)


def test_device_memory_counts_against_free_memory():
    with tidal.Context(sim_config('[sim]\ncapacity = "1GiB"\n[pool]\nenabled = false\n')) as ctx:
        free = ctx.device_info(0).free_memory
        with ctx.alloc(256 * MiB, kind="device"):
            assert ctx.device_info(0).free_memory == free - 256 * MiB

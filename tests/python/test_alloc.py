"""Allocation, query and free: every kind the simulated device has, bad input, out of memory."""
import ctypes

import pytest
import tidal

from conftest import MiB, sim_config

SIM_KINDS = [tidal.Kind.DEVICE, tidal.Kind.MANAGED, tidal.Kind.PINNED, tidal.Kind.PAGEABLE]
SIZES = [1, 4096 + 3, 3 * MiB + 17]


def pattern(n, seed):
    return bytes((i * 131 + seed) & 0xFF for i in range(n))


@pytest.mark.parametrize("kind", SIM_KINDS + [tidal.Kind.AUTO], ids=lambda k: k.label)
@pytest.mark.parametrize("size", SIZES)
def test_write_read_query_free(ctx, kind, size):
    a = ctx.alloc(size, kind=kind)
    assert isinstance(a, tidal.Allocation)
    assert a.address != 0 and a.size == size and int(a) == a.address
    data = pattern(size, int(kind))
    a.write(data)
    assert a.read() == data
    info = ctx.query(a)
    assert info.base == a.address
    assert info.size == size
    if kind == tidal.Kind.AUTO:
        assert info.kind in SIM_KINDS
    else:
        assert info.kind == kind
    a.free()
    assert a.freed


@pytest.mark.parametrize("kind", SIM_KINDS, ids=lambda k: k.label)
def test_view_is_the_memory_itself(ctx, kind):
    with ctx.alloc(64 * 1024, kind=kind) as a:
        view = a.view()
        assert len(view) == a.size and not view.readonly
        view[:5] = b"tidal"
        view[-3:] = b"end"
        assert a.read(5) == b"tidal"
        assert a.read(3, offset=a.size - 3) == b"end"
        ctypes.memmove(a.address + 100, b"direct", 6)
        assert bytes(view[100:106]) == b"direct"
    assert a.freed


def test_fine_and_coarse_kinds_on_an_amd_profile(amd_profile):
    with tidal.Context(sim_config(f'[sim]\nprofile = "{amd_profile}"\n')) as ctx:
        assert ctx.device_info(0).flags & tidal.DeviceFlag.FINE_GRAINED
        for kind in (tidal.Kind.DEVICE_FINE, tidal.Kind.MANAGED_COARSE):
            with ctx.alloc(MiB, kind=kind) as a:
                a.write(pattern(MiB, 9))
                assert a.read() == pattern(MiB, 9)
                assert ctx.query(a).kind == kind


def test_fine_kinds_are_not_supported_on_nvidia(ctx):
    with pytest.raises(tidal.NotSupportedError, match="fine/coarse-grained"):
        ctx.alloc(4096, kind="device-fine")


def test_kind_by_name_and_number(ctx):
    for spec in ("managed", "MANAGED", 2, tidal.Kind.MANAGED):
        with ctx.alloc(4096, kind=spec) as a:
            assert ctx.query(a).kind is tidal.Kind.MANAGED
    with pytest.raises(ValueError, match="unknown memory kind 'vram'"):
        ctx.alloc(4096, kind="vram")


def test_tag_hints_alignment_and_device_are_recorded(ctx):
    hints = tidal.Hint.READ_MOSTLY | tidal.Hint.STREAMING
    with ctx.alloc(10000, kind="managed", tag="weights.layer0", hints=hints, alignment=1 << 20,
                   device=0) as a:
        info = a.info()
        assert info.tag == "weights.layer0"
        assert info.hints == hints
        assert info.alignment >= 1 << 20 and a.address % (1 << 20) == 0
        assert info.device == 0
        assert info.placed_by == "core"
        # Core defaults turn the read-mostly hint into read-mostly advice on managed memory.
        assert info.advice & tidal.Advice.READ_MOSTLY


def test_untagged_defaults(ctx):
    with ctx.alloc(1000) as a:
        info = a.info()
        assert info.tag == "" and info.hints == tidal.Hint.NONE
        assert info.kind != tidal.Kind.AUTO


def test_host_kinds_have_no_device(ctx):
    with ctx.alloc(4096, kind="pageable") as a:
        assert a.info().device == tidal.DEVICE_HOST


def test_policy_places_by_tag():
    config = sim_config('policies = ["rules"]\n'
                        "[[policy.rules.rule]]\n"
                        'tag = "weights*"\n'
                        'kind = "managed"\n'
                        'advice = ["preferred-device"]\n')
    with tidal.Context(config) as ctx:
        with ctx.alloc(MiB, tag="weights.fc1") as w, ctx.alloc(MiB, tag="activations") as x:
            assert w.info().kind == tidal.Kind.MANAGED
            assert w.info().placed_by == "rules"
            assert w.info().advice & tidal.Advice.PREFERRED_DEVICE
            assert x.info().placed_by == "core"


def test_interior_pointers(ctx):
    with ctx.alloc(8 * MiB, kind="device") as a:
        inner = a.address + 5 * MiB + 3
        assert ctx.query(inner).base == a.address
        with pytest.raises(tidal.InvalidArgumentError, match="interior pointer") as info:
            ctx.free(inner)
        assert hex(a.address) in info.value.message  # the message names the base
        assert ctx.query(a).size == 8 * MiB          # nothing was freed


def test_double_free_through_the_address(ctx):
    a = ctx.alloc(4096, kind="pinned")
    address = a.address
    ctx.free(address)
    with pytest.raises(tidal.UnknownPointerError) as info:
        ctx.free(address)
    assert info.value.status == 5
    assert info.value.status_name == "TIDAL_ERROR_UNKNOWN_POINTER"
    assert "tidal_free" in info.value.message


def test_double_free_through_the_object_is_refused_before_the_library(ctx):
    a = ctx.alloc(4096, kind="device")
    a.free()
    # The address may already belong to a newer allocation: the object refuses by itself.
    b = ctx.alloc(4096, kind="device")
    with pytest.raises(tidal.UnknownPointerError, match="already freed"):
        a.free()
    with pytest.raises(tidal.UnknownPointerError, match="already freed"):
        a.read()
    assert ctx.query(b).base == b.address  # b survived
    b.free()


def test_foreign_pointers(ctx):
    foreign = ctypes.create_string_buffer(64)
    with pytest.raises(tidal.UnknownPointerError, match="never returned"):
        ctx.free(ctypes.addressof(foreign))
    with pytest.raises(tidal.UnknownPointerError):
        ctx.query(ctypes.addressof(foreign))
    ctx.free(None)  # NULL is accepted and does nothing


@pytest.mark.parametrize("kwargs, text", [
    ({"size": 0}, "size is 0"),
    ({"size": 64, "alignment": 3}, "not a power of two"),
    ({"size": 64, "alignment": 1 << 31}, "not a power of two up to 1 GiB"),
    ({"size": 64, "tag": "t" * 64}, "longer than 63 bytes"),
    ({"size": 64, "hints": 0x100}, "unknown hint bits 0x100"),
    ({"size": 64, "kind": 42}, "kind 42 is not a tidal_kind"),
])
def test_bad_arguments_carry_the_library_message(ctx, kwargs, text):
    with pytest.raises(tidal.InvalidArgumentError) as info:
        ctx.alloc(**kwargs)
    assert info.value.status == 1
    assert text in info.value.message
    assert info.value.message.startswith("tidal_alloc: ")
    assert isinstance(info.value, ValueError)


def test_binding_checks(ctx):
    with pytest.raises(tidal.InvalidArgumentError, match="size is -1"):
        ctx.alloc(-1)
    with pytest.raises(TypeError):
        ctx.alloc(1.5)
    with pytest.raises(tidal.InvalidArgumentError, match="NUL"):
        ctx.alloc(16, tag="a\0b")
    with ctx.alloc(16, kind="pinned") as a:
        with pytest.raises(tidal.InvalidArgumentError, match="runs past"):
            a.write(b"x" * 17)
        with pytest.raises(tidal.InvalidArgumentError, match="runs past"):
            a.read(8, offset=9)


def test_missing_device_is_not_found(ctx):
    with pytest.raises(tidal.NotFoundError, match="device 4 does not exist"):
        ctx.alloc(64, kind="device", device=4)


def test_out_of_memory_on_a_small_device():
    with tidal.Context(sim_config('[sim]\ncapacity = "64MiB"\n')) as ctx:
        with pytest.raises(tidal.OutOfMemoryError) as info:
            ctx.alloc(128 * MiB, kind="device")
        e = info.value
        assert e.status == 2 and e.status_name == "TIDAL_ERROR_OUT_OF_MEMORY"
        assert "134217728 bytes" in e.message and "hint:" in e.message
        assert isinstance(e, MemoryError)
        with ctx.alloc(32 * MiB, kind="device"):  # the context is still usable
            pass


def test_sizes_that_can_never_fit(ctx):
    with pytest.raises(tidal.OutOfMemoryError):
        ctx.alloc(1 << 60, kind="device")


def test_injected_runtime_failure_surfaces_with_the_native_name():
    config = sim_config('[[sim.fault]]\noperation = "alloc"\nnth = 1\nerror = "hipErrorOutOfMemory"\n'
                        '[pool]\nenabled = false\n')
    with tidal.Context(config) as ctx:
        with pytest.raises(tidal.OutOfMemoryError, match="cudaErrorMemoryAllocation"):
            ctx.alloc(4096, kind="device")
        with ctx.alloc(4096, kind="device"):  # only the first call was made to fail
            pass

"""Elastic device memory through the Python package, on the simulated device: offload and
restore by tag glob and by range, the result record, the queries and statistics, discard, and
bad calls. The simulated device's memory is host memory, so Allocation.view() reads resident
chunks directly; an offloaded chunk is unmapped (touching it would fault, as on a GPU)."""
import pytest
import tidal

from conftest import MiB, sim_config

# 4 MiB chunks: an 8 MiB allocation is two.
ELASTIC = sim_config('[elastic]\nchunk_size = "4MiB"\n[pool]\nenabled = false\n')


@pytest.fixture
def ectx():
    with tidal.Context(ELASTIC) as c:
        yield c


def pattern(size, seed):
    return bytes((i * 31 + seed) & 0xFF for i in range(256)) * (size // 256)


def test_round_trip_by_tag_keeps_address_and_bytes(ectx):
    w = ectx.alloc(8 * MiB, kind="elastic", device=0, tag="weights.0")
    data = pattern(w.size, 3)
    w.view()[:] = data
    info = ectx.query(w)
    assert info.kind == tidal.Kind.ELASTIC
    assert (info.resident_bytes, info.offloaded_bytes, info.discarded_bytes) == (8 * MiB, 0, 0)
    free_before = ectx.device_info(0).free_memory
    before = ectx.migration_stats(0)

    r = ectx.offload("weights*")
    assert isinstance(r, tidal.ElasticResult)
    assert (r.allocations, r.copied_bytes, r.released_bytes, r.discarded_bytes) == (1, 8 * MiB, 8 * MiB, 0)
    assert r.home_seconds >= 0 and r.move_seconds >= 0
    info = ectx.query(w)
    assert (info.resident_bytes, info.offloaded_bytes) == (0, 8 * MiB)
    assert ectx.device_info(0).free_memory == free_before + 8 * MiB
    # An offloaded allocation still copies out (from its home).
    assert w.read(4096, offset=5 * MiB) == data[5 * MiB:5 * MiB + 4096]

    r = ectx.restore("weights*")
    assert (r.allocations, r.mapped_bytes, r.copied_bytes) == (1, 8 * MiB, 8 * MiB)
    assert ectx.query(w).base == w.address
    assert bytes(w.view()) == data
    after = ectx.migration_stats(0)
    assert after.elastic_offloads - before.elastic_offloads == 2
    assert after.elastic_restores - before.elastic_restores == 2
    assert after.elastic_copied_out - before.elastic_copied_out == 8 * MiB
    assert after.elastic_copied_in - before.elastic_copied_in == 8 * MiB
    w.free()


def test_unmatched_tag_is_ok_with_nothing_moved(ectx):
    with ectx.alloc(MiB, kind="elastic", device=0, tag="kv"):
        r = ectx.offload("weights*")
        assert (r.allocations, r.copied_bytes, r.released_bytes) == (0, 0, 0)
        assert ectx.restore("nothing").allocations == 0


def test_range_and_read_only_restore(ectx):
    w = ectx.alloc(8 * MiB, kind="elastic", device=0, tag="layer")
    data = pattern(w.size, 9)
    w.view()[:] = data
    r = ectx.offload_range(w.address + 5 * MiB, 10)  # widened to the second chunk
    assert r.copied_bytes == 4 * MiB
    rng = ectx.range_query(w, 4 * MiB)
    assert (rng.resident_bytes, rng.offloaded_bytes) == (4 * MiB, 0)
    assert rng.last_prefetch_location == tidal.LOCATION_NONE
    assert ectx.range_query(w.address + 4 * MiB).offloaded_bytes == 4 * MiB  # to the end
    assert bytes(w.view()[:4 * MiB]) == data[:4 * MiB]  # the resident chunk stays usable

    r = ectx.restore_range(w.address + 4 * MiB, flags=tidal.Restore.READ_ONLY)
    assert r.mapped_bytes == 4 * MiB
    assert bytes(w.view()) == data
    # The read-only chunk's home is current: only the other chunk is copied this time.
    r = ectx.offload("layer", flags=tidal.Offload.KEEP_PHYSICAL)
    assert (r.copied_bytes, r.pooled_bytes, r.released_bytes) == (4 * MiB, 8 * MiB, 0)
    ectx.restore("layer")
    assert bytes(w.view()) == data
    w.free()


def test_discard_then_free(ectx):
    kv = ectx.alloc(4 * MiB, kind="elastic", device=0, tag="kv")
    r = ectx.offload("kv", flags=tidal.Offload.DISCARD)
    assert (r.discarded_bytes, r.copied_bytes) == (4 * MiB, 0)
    assert ectx.query(kv).discarded_bytes == 4 * MiB
    with pytest.raises(tidal.InvalidArgumentError):
        kv.read(16)  # a discarded chunk has no contents to copy
    kv.free()


def test_restore_onto_a_full_device_says_what_was_done():
    with tidal.Context(sim_config('[sim]\ncapacity = "64MiB"\n'
                                  '[elastic]\nchunk_size = "4MiB"\n[pool]\nenabled = false\n')) as c:
        w = c.alloc(16 * MiB, kind="elastic", device=0, tag="w")
        c.offload("w")
        filler = c.alloc(c.device_info(0).free_memory - 4 * MiB, kind="device", device=0)
        with pytest.raises(tidal.OutOfMemoryError) as caught:
            c.restore("w")
        assert caught.value.elastic_result.mapped_bytes == 0
        assert c.query(w).offloaded_bytes == 16 * MiB  # nothing left half-mapped
        filler.free()
        c.restore("w")
        w.free()


def test_bad_calls(ectx):
    with ectx.alloc(MiB, kind="device", device=0) as d:
        with pytest.raises(tidal.InvalidArgumentError, match="elastic"):
            ectx.offload_range(d)
    with pytest.raises(tidal.InvalidArgumentError, match="unknown flags 0x8"):
        ectx.offload("*", flags=0x8)
    with pytest.raises(tidal.InvalidArgumentError, match="unknown flags 0x2"):
        ectx.restore("*", flags=0x2)
    with pytest.raises(tidal.InvalidArgumentError, match="NUL"):
        ectx.restore("a\0b")
    with pytest.raises(tidal.UnknownPointerError):
        ectx.restore_range(12345, 1)

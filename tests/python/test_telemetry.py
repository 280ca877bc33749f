"""Context.stats() (tidal_stats_json) and Context.allocations() (tidal_allocations_list)."""
import tidal

from conftest import sim_config


def test_stats_by_tag_and_allocations():
    with tidal.Context(sim_config("[telemetry]\ntag_depth = 1\n")) as ctx:
        a = ctx.alloc(1000, kind=tidal.Kind.DEVICE, tag="model/w")
        b = ctx.alloc(3000, kind=tidal.Kind.PINNED, tag="model/kv")
        s = ctx.stats()
        assert s["schema"] == "tidal-stats/1"
        assert {t["tag"]: t["bytes"] for t in s["by_tag"]} == {"model": 4000}
        live = ctx.allocations()
        assert [i.base for i in live] == sorted([a.address, b.address])
        assert {i.tag for i in live} == {"model/w", "model/kv"}
        a.free()
        assert [i.base for i in ctx.allocations()] == [b.address]
        b.free()
        assert ctx.allocations() == []

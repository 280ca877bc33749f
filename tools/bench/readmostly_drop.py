#!/usr/bin/env python3
"""Does evicting read-only, read-mostly managed memory free device memory without a copy back?

tidal's eviction of a range never written and carrying read-mostly advice sets the preferred
location to the host and unsets read-mostly, so the duplicates collapse onto the host copy. This
measures, on the GPU in use, the device's free memory (cudaMemGetInfo through tidal) before and
after such evictions, and how long they take, against a written range moved back by prefetch.
Public API only (the tidal Python package). Managed memory used: 2 x SIZE (default 2 x 2 GiB).

    TIDAL_LIBRARY=.../libtidal.so python3 tools/bench/readmostly_drop.py [--size-gib 2] [--json F]
"""
import argparse, json, os, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
import tidal  # noqa: E402

GiB = 1 << 30


def run(read_mostly: bool, size: int):
    ctx = tidal.Context('runtime = "auto"\n[migration]\nchunk_size = "256MiB"\n')
    try:
        hints = tidal.Hint.READ_MOSTLY if read_mostly else tidal.Hint.NONE
        a = ctx.alloc(size, kind=tidal.Kind.MANAGED, device=0, hints=hints)
        b = ctx.alloc(size, kind=tidal.Kind.MANAGED, device=0, hints=hints)
        for x in (a, b):
            ctypes_memset(x.address, 1, size)
        mode = tidal.Access.READ if read_mostly else tidal.Access.READ_WRITE
        ctx.declare(None, [(a.address, size, 0, mode)])
        ctx.check(tidal.CheckKind.TOUCH_READ, a.address, size)
        ctx.declare(None, [])                     # the phase is over: a may be evicted now
        free_before = ctx.device_info(0).free_memory
        ctx.budget_set(0, size)                   # room for one of them only
        t0 = time.perf_counter()
        ctx.declare(None, [(b.address, size, 0, mode)])   # evicts a first
        ctx.check(tidal.CheckKind.TOUCH_READ, b.address, size)
        seconds = time.perf_counter() - t0
        free_after = ctx.device_info(0).free_memory
        st = ctx.migration_stats(0)
        out = {"read_mostly": read_mostly, "size": size, "seconds_evict_and_bring_in": seconds,
               "device_free_change_bytes": free_after - free_before,
               "evicted_bytes": st.evicted_bytes, "dropped_bytes": st.dropped_bytes,
               "resident_bytes": st.resident_bytes}
        a.free(); b.free()
        return out
    finally:
        ctx.close()


def ctypes_memset(address, value, size):
    import ctypes
    ctypes.memset(address, value, size)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-gib", type=float, default=2.0)
    p.add_argument("--json")
    args = p.parse_args()
    size = int(args.size_gib * GiB)
    results = [run(True, size), run(False, size)]
    for r in results:
        print(("read-mostly, read-only" if r["read_mostly"] else "written            ") +
              f": evict {size / GiB:.1f} GiB + bring in {size / GiB:.1f} GiB in {r['seconds_evict_and_bring_in']:.3f} s; "
              f"device free memory changed by {r['device_free_change_bytes'] / GiB:+.2f} GiB (0: the evicted copy was released) "
              f"(dropped {r['dropped_bytes'] / GiB:.2f} GiB, copied back {r['evicted_bytes'] / GiB:.2f} GiB)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()

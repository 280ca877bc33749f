"""Several Python threads on one context: allocations stay intact and every thread gets its own
error message (ctypes releases the GIL, so the calls really run at once)."""
import random
import threading

import tidal

THREADS = 8
ROUNDS = 150
KINDS = ["device", "managed", "pinned", "pageable"]


def run_threads(target):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # reported to the main thread, which fails the test
            errors.append(f"thread {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, "\n".join(errors)


def test_threads_alloc_write_free(ctx):
    def work(i):
        rng = random.Random(i)
        live = []
        for r in range(ROUNDS):
            size = rng.choice([64, 4096, 70000, 1 << 20, 3 << 20])
            a = ctx.alloc(size, kind=rng.choice(KINDS), tag=f"t{i}")
            stamp = bytes([(i * 31 + r) & 0xFF]) * 64
            a.view()[:64] = stamp[:min(64, size)]
            live.append((a, stamp[:min(64, size)]))
            if len(live) > 4 or rng.random() < 0.5:
                old, expected = live.pop(rng.randrange(len(live)))
                assert bytes(old.view()[:len(expected)]) == expected, "another thread wrote here"
                assert ctx.query(old).tag == f"t{i}"
                old.free()
        for a, expected in live:
            assert bytes(a.view()[:len(expected)]) == expected
            a.free()

    run_threads(work)
    for kind in ("device", "managed"):
        stats = ctx.pool_stats(kind)
        assert stats.allocations == stats.frees
    assert ctx.pool_stats("pinned").allocations == ctx.pool_stats("pinned").frees


def test_each_thread_sees_its_own_error():
    with tidal.Context('runtime = "sim"\n[sim]\ncapacity = "256MiB"\n') as ctx:
        def work(i):
            for _ in range(50):
                if i % 2:
                    try:
                        ctx.alloc(0)
                    except tidal.InvalidArgumentError as e:
                        assert "size is 0" in e.message, e.message
                    else:
                        raise AssertionError("size 0 was accepted")
                else:
                    try:
                        ctx.alloc(1 << 30, kind="device")
                    except tidal.OutOfMemoryError as e:
                        assert "1073741824 bytes" in e.message, e.message
                    else:
                        raise AssertionError("1 GiB fit in 256 MiB")

        run_threads(work)


def test_threads_with_their_own_contexts():
    def work(i):
        with tidal.Context(f'runtime = "sim"\n[sim]\ndevices = {1 + i % 3}\n') as ctx:
            assert ctx.system_info().device_count == 1 + i % 3
            for _ in range(20):
                with ctx.alloc(8192, kind="device", device=i % (1 + i % 3)) as a:
                    a.write(b"x" * 8192)

    run_threads(work)

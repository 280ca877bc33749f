#!/usr/bin/env python3
"""tidal.torch on a real GPU: PyTorch allocates through tidal, out of memory is
torch.OutOfMemoryError with tidal's message, stream-ordered reuse is safe, and memory_stats
follows the tensors. Each case runs in a fresh process (an allocator is installed once per
process, before CUDA starts). Exits 77 (skipped) without torch or without a CUDA device.

    TIDAL_LIBRARY=.../libtidal.so python3 tests/device/test_torch_gpu.py
"""
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "..", "bindings", "python")

PRELUDE = textwrap.dedent("""
    import sys
    sys.path.insert(0, {package!r})
    import tidal.torch
    tidal.torch.install('runtime = "cuda"\\n[pool]\\ngrowth = "2MiB"\\n')
    import torch
""")

# One training step, run under tidal (a case below) and under PyTorch's allocator (REFERENCE).
TRAINING_STEP = """
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(256, 512, device="cuda", generator=torch.Generator("cuda").manual_seed(1))
        y = torch.randint(0, 10, (256,), device="cuda", generator=torch.Generator("cuda").manual_seed(2))
        for _ in range(5):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
        print("LOSS", repr(loss.item()))
"""

CASES = {
    "out of memory is torch.OutOfMemoryError with tidal's message": """
        try:
            torch.empty(1 << 40, dtype=torch.uint8, device="cuda")
        except torch.OutOfMemoryError as e:
            assert "TIDAL_ERROR_OUT_OF_MEMORY" in str(e), str(e)
            assert "1099511627776" in str(e), str(e)
        else:
            raise AssertionError("no torch.OutOfMemoryError for 1 TiB")
        # the allocator still works afterwards
        assert torch.ones(1000, device="cuda").sum().item() == 1000
        assert tidal.torch.memory_stats()["num_ooms"] == 1
    """,
    "tensors live in tidal's pool and memory_stats follows them": """
        before = tidal.torch.memory_stats()["allocated_bytes.all.current"]
        x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
        info = tidal.torch.context().query(x.data_ptr())
        assert info.size >= 64 << 20 and info.kind.name == "DEVICE", info
        assert tidal.torch.memory_stats()["allocated_bytes.all.current"] >= before + (64 << 20)
        del x
        torch.cuda.synchronize()
        assert tidal.torch.memory_stats()["allocated_bytes.all.current"] == before
    """,
    "work on two streams stays correct with stream-ordered frees": """
        s = torch.cuda.Stream()
        ref = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
        for i in range(50):
            with torch.cuda.stream(s):
                a = torch.full((1 << 20,), float(i), device="cuda")
                b = a + ref
            torch.cuda.current_stream().wait_stream(s)
            c = b - ref                      # on the default stream, after s
            assert torch.all(c == float(i)).item(), i
            b.record_stream(torch.cuda.current_stream()) if hasattr(b, "record_stream") else None
            del a, b, c
        torch.cuda.synchronize()
    """,
    "a training step gives the same loss as PyTorch's own allocator": TRAINING_STEP,
}

# The reference: the same step under PyTorch's own allocator.
REFERENCE = "import torch\n" + textwrap.dedent(TRAINING_STEP)


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def main():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("skipped: torch is not installed")
        return 77
    probe = run("import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)")
    if probe.returncode != 0:
        print("skipped: no CUDA device")
        return 77
    failures = 0
    losses = {}
    for name, body in CASES.items():
        r = run(PRELUDE.format(package=os.path.abspath(PACKAGE)) + textwrap.dedent(body))
        ok = r.returncode == 0
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
        if not ok:
            print(r.stdout[-2000:], r.stderr[-4000:])
        for line in r.stdout.splitlines():
            if line.startswith("LOSS"):
                losses["tidal"] = line.split()[1]
    ref = run(REFERENCE)
    for line in ref.stdout.splitlines():
        if line.startswith("LOSS"):
            losses["torch"] = line.split()[1]
    same = losses.get("tidal") is not None and losses.get("tidal") == losses.get("torch")
    print(f"{'ok  ' if same else 'FAIL'} losses: tidal {losses.get('tidal')} torch {losses.get('torch')}")
    failures += not same
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

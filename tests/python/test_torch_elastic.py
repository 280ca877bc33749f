"""tidal.torch.tag / offload / restore with PyTorch on a CUDA GPU: a model built in a tag scope
is offloaded (its memory shows free to CUDA and other tensors use it), restored with every
data_ptr() unchanged, and computes bit-identical outputs; discard, nesting and untagged tensors.
Skips without torch or a CUDA device. Each case runs in a fresh process (an allocator is
installed once per process, before CUDA starts). The torch-free parts: test_torch_scope.py."""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python")

PRELUDE = textwrap.dedent("""
    import sys
    sys.path.insert(0, {package!r})
    import tidal, tidal.torch
    tidal.torch.install('runtime = "cuda"\\n')
    import torch
    MiB = 1 << 20
""")

CASES = {
    "round trip": """
        torch.manual_seed(0)
        with tidal.torch.tag("weights"):
            model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)]).cuda()
        x = torch.randn(64, 2048, device="cuda")
        before = model(x)
        ptrs = [p.data_ptr() for p in model.parameters()]
        ctx = tidal.torch.context()
        for p in model.parameters():
            info = ctx.query(p.data_ptr())
            assert info.kind == tidal.Kind.ELASTIC and info.tag == "weights", info
        free0 = torch.cuda.mem_get_info()[0]
        r = tidal.torch.offload("weights")
        assert r.allocations == 8 and r.copied_bytes >= 4 * 2048 * 2048 * 4, r
        free1 = torch.cuda.mem_get_info()[0]
        assert free1 - free0 >= 4 * 2048 * 2048 * 4, (free0, free1)
        # The freed memory serves other tensors, then goes again.
        other = torch.full((4 * 2048 * 2048,), 7.0, device="cuda")
        assert other.sum().item() == 7.0 * other.numel()
        del other
        r = tidal.torch.restore("weights")
        assert r.allocations == 8, r
        assert [p.data_ptr() for p in model.parameters()] == ptrs
        after = model(x)
        assert torch.equal(before, after)
        print("OK")
    """,
    "discard, nested scopes and untagged tensors": """
        with tidal.torch.tag("model"):
            w = torch.ones(1 << 20, device="cuda")
            with tidal.torch.tag("kv", min_bytes=MiB):
                kv = torch.zeros(1 << 20, device="cuda")
                small = torch.zeros(16, device="cuda")
            b = torch.ones(16, device="cuda")
        plain = torch.ones(1 << 20, device="cuda")
        ctx = tidal.torch.context()
        tags = {n: ctx.query(t.data_ptr()).tag for n, t in
                dict(w=w, kv=kv, small=small, b=b, plain=plain).items()}
        assert tags == dict(w="model", kv="kv", small="kv", b="model", plain="torch"), tags
        assert ctx.query(small.data_ptr()).kind != tidal.Kind.ELASTIC
        assert ctx.query(plain.data_ptr()).kind != tidal.Kind.ELASTIC
        r = tidal.torch.offload("kv", discard=True)
        assert r.allocations == 1 and r.copied_bytes == 0 and r.discarded_bytes >= 4 * MiB, r
        tidal.torch.offload("model")
        tidal.torch.restore("*")
        kv.zero_()
        assert kv.sum().item() == 0 and w.sum().item() == w.numel()
        del kv  # an elastic tensor freed normally
        tidal.torch.offload("model")
        del w   # and one freed while offloaded
        print("OK")
    """,
}


@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    code = PRELUDE.format(package=os.path.abspath(PACKAGE)) + textwrap.dedent(CASES[name])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout + result.stderr

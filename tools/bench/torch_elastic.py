#!/usr/bin/env python3
"""torch-elastic: issue 14's target c. A model built under tidal.torch.tag("weights") is
offloaded, its memory used by other tensors, then restored, against the hand-written way, in
one process on one GPU.

  tidal        with tidal.torch.tag("weights"): model = ...   (elastic memory)
               offload: tidal.torch.offload("weights")        (copies to the host homes, unmaps,
                                                               gives the memory back to CUDA)
               restore: tidal.torch.restore("weights")        (maps, copies back)
               every data_ptr() is unchanged; the optimizer would keep working.
  hand-written the same model outside any scope (tidal's ordinary device memory), pinned CPU
               tensors allocated beforehand (not timed);
               offload: copy every parameter into its pinned tensor, synchronise, free the GPU
                        tensors (param.data = an empty tensor);
               restore: copy back into new GPU tensors (param.data = pinned.to("cuda")).
               every data_ptr() has changed: an optimizer would have to be rebuilt.

Both are timed alike: torch.cuda.synchronize() before, time.perf_counter() around the call and a
torch.cuda.synchronize() after it; one rep = offload + restore. Between them (not timed) other
tensors take 90 % of the freed bytes, are written and freed, and tidal.torch.empty_cache()
gives the pools' memory back, so each restore finds the memory in CUDA's hands, as in a
program that really used it. Each rep checks that the model's outputs are bit-identical to
those before the first offload (and, for tidal, that every data_ptr() is unchanged and that
CUDA shows >= 98 % of the weights' bytes free after the offload). The first rep is a warm-up;
the report gives medians of the rest and the ratio tidal / hand-written (target <= 1.1).

Host homes: with --home eager (the default) tidal makes each allocation's pinned home with
the allocation, as the hand-written way allocates its pinned tensors beforehand; with lazy, the
first offload makes them and home_seconds says what that cost (the warm-up rep absorbs it).

Only device memory is used: the configuration places nothing in managed memory, and every
tensor's kind is checked (elastic or device).

  torch_elastic.py [--width 16384] [--layers 8] [--dtype float32] [--batch 256] [--reps 5]
                   [--home eager|lazy] [--chunk-size 64MiB] [--out FILE.json]
                   [--library PATH/libtidal.so]

tidal is imported from PYTHONPATH, else from bindings/python of this source tree; libtidal from
TIDAL_LIBRARY or --library. The default model is 8 x (16384 x 16384) fp32 weights, 8 GiB.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MiB = 1 << 20
GiB = 1 << 30
RATIO_TARGET = 1.1
FREE_TARGET = 0.98


def tidal_config(args):
    lines = ['runtime = "cuda"', 'log_level = "warn"',
             "[elastic]", f'home = "{args.home}"', f'chunk_size = "{args.chunk_size}"']
    return "\n".join(lines) + "\n"


def build_model(torch, args, device):
    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    return torch.nn.Sequential(*[torch.nn.Linear(args.width, args.width, device=device, dtype=dtype)
                                 for _ in range(args.layers)])


def timed(torch, call):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    value = call()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, value


def use_freed_memory(torch, tidal, nbytes):
    """Other tensors in the freed memory: written, read, freed; the pools' memory goes back."""
    other = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    kind = tidal.torch.context().query(other.data_ptr()).kind
    other.fill_(1)
    ok = int(other[::4096].sum().item()) == len(range(0, nbytes, 4096))
    del other
    torch.cuda.synchronize()
    tidal.torch.empty_cache()
    return ok, kind


def run(args):
    if args.library:
        os.environ["TIDAL_LIBRARY"] = args.library
    try:
        import tidal.torch
    except ImportError:
        sys.path.insert(0, os.path.join(SOURCE_ROOT, "bindings", "python"))
        import tidal.torch
    import torch

    config = tidal_config(args)
    ctx = tidal.torch.install(config)
    device = torch.device("cuda", 0)
    torch.backends.cuda.matmul.allow_tf32 = False
    report = {"benchmark": "torch-elastic", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "host": platform.node(), "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "tidal": {"version": tidal.version(), "library": tidal.library_path(),
                        "runtime": ctx.system_info().runtime_detail, "config": config},
              "args": vars(args)}
    checks = {"outputs_bit_identical": True, "data_ptr_unchanged": True, "freed_fraction_ok": True,
              "only_device_memory": True, "other_tensors_ok": True}
    allowed = {tidal.Kind.ELASTIC, tidal.Kind.DEVICE}

    # ---- tidal: the model in a tag scope
    with tidal.torch.tag("weights"):
        model = build_model(torch, args, device)
    params = list(model.parameters())
    weight_bytes = sum(p.numel() * p.element_size() for p in params)
    report["weight_bytes"] = weight_bytes
    report["tensors"] = len(params)
    kinds = {ctx.query(p.data_ptr()).kind for p in params}
    checks["only_device_memory"] &= kinds <= allowed
    report["tidal_kinds"] = sorted(k.name for k in kinds)
    x = torch.randn(args.batch, args.width, device=device, dtype=getattr(torch, args.dtype),
                    generator=torch.Generator(device=device).manual_seed(args.seed + 1))
    with torch.no_grad():
        reference = model(x)
    pointers = [p.data_ptr() for p in params]

    tidal_reps = []
    for rep in range(args.reps + 1):
        free_before = torch.cuda.mem_get_info()[0]
        t_off, r_off = timed(torch, lambda: tidal.torch.offload("weights"))
        freed = torch.cuda.mem_get_info()[0] - free_before
        checks["freed_fraction_ok"] &= freed >= FREE_TARGET * weight_bytes
        ok, kind = use_freed_memory(torch, tidal, int(0.9 * weight_bytes))
        checks["other_tensors_ok"] &= ok
        checks["only_device_memory"] &= kind in allowed
        t_res, r_res = timed(torch, lambda: tidal.torch.restore("weights"))
        checks["data_ptr_unchanged"] &= [p.data_ptr() for p in params] == pointers
        with torch.no_grad():
            checks["outputs_bit_identical"] &= bool(torch.equal(model(x), reference))
        tidal_reps.append({"offload_s": t_off, "restore_s": t_res, "total_s": t_off + t_res,
                           "freed_bytes": freed, "offload": vars_of(r_off), "restore": vars_of(r_res)})
    del model, params
    torch.cuda.synchronize()
    tidal.torch.empty_cache()

    # ---- hand-written: the same model in ordinary device memory, pinned copies
    model = build_model(torch, args, device)
    params = list(model.parameters())
    checks["only_device_memory"] &= {ctx.query(p.data_ptr()).kind for p in params} <= allowed
    with torch.no_grad():
        reference_hand = model(x)
    pinned = [torch.empty(p.shape, dtype=p.dtype, device="cpu", pin_memory=True) for p in params]

    def hand_offload():
        for p, h in zip(params, pinned):
            h.copy_(p.data, non_blocking=True)
        torch.cuda.synchronize()  # the copies must land before the GPU tensors go
        for p in params:
            p.data = torch.empty(0, dtype=p.dtype, device=device)

    def hand_restore():
        for p, h in zip(params, pinned):
            p.data = h.to(device, non_blocking=True)

    hand_reps = []
    for rep in range(args.reps + 1):
        t_off, _ = timed(torch, hand_offload)
        ok, kind = use_freed_memory(torch, tidal, int(0.9 * weight_bytes))
        checks["other_tensors_ok"] &= ok
        t_res, _ = timed(torch, hand_restore)
        with torch.no_grad():
            checks["outputs_bit_identical"] &= bool(torch.equal(model(x), reference_hand))
        hand_reps.append({"offload_s": t_off, "restore_s": t_res, "total_s": t_off + t_res})

    def medians(reps):
        rest = reps[1:]
        return {k: statistics.median(r[k] for r in rest) for k in ("offload_s", "restore_s", "total_s")}

    t, h = medians(tidal_reps), medians(hand_reps)
    report.update({
        "tidal_reps": tidal_reps, "hand_reps": hand_reps, "tidal_median": t, "hand_median": h,
        "ratio": t["total_s"] / h["total_s"],
        "ratio_offload": t["offload_s"] / h["offload_s"], "ratio_restore": t["restore_s"] / h["restore_s"],
        "checks": checks,
    })
    report["passed"] = all(checks.values()) and report["ratio"] <= RATIO_TARGET
    return report


def vars_of(result):
    return {k: getattr(result, k) for k in result.__dataclass_fields__}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=16384)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--reps", type=int, default=5, help="timed reps after one warm-up")
    parser.add_argument("--home", default="eager", choices=["eager", "lazy"])
    parser.add_argument("--chunk-size", default="64MiB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the report as JSON")
    parser.add_argument("--library", help="libtidal.so to load (else TIDAL_LIBRARY)")
    args = parser.parse_args(argv)
    report = run(args)
    gib = report["weight_bytes"] / GiB
    t, h = report["tidal_median"], report["hand_median"]
    print(f"torch-elastic: {report['tensors']} tensors, {gib:.2f} GiB of weights on {report['gpu']}")
    print(f"{'':14}{'offload ms':>12}{'restore ms':>12}{'total ms':>12}{'GB/s each way':>15}")
    for name, m in (("tidal", t), ("hand-written", h)):
        rate = report["weight_bytes"] / 1e9 / (m["total_s"] / 2)
        print(f"{name:14}{m['offload_s'] * 1e3:12.1f}{m['restore_s'] * 1e3:12.1f}{m['total_s'] * 1e3:12.1f}"
              f"{rate:15.1f}")
    print(f"ratio tidal / hand-written: {report['ratio']:.3f} (target <= {RATIO_TARGET}); offload "
          f"{report['ratio_offload']:.3f}, restore {report['ratio_restore']:.3f}")
    homes = sum(r["offload"]["home_seconds"] for r in report["tidal_reps"])
    print(f"host homes made during offloads: {homes * 1e3:.1f} ms in all (--home {report['args']['home']})")
    for name, ok in report["checks"].items():
        print(f"  {name}: {'yes' if ok else 'NO'}")
    if report["args"].get("out"):
        with open(report["args"]["out"], "w") as f:
            json.dump(report, f, indent=2)
    print("PASSED" if report["passed"] else "FAILED")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())

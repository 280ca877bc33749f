#!/usr/bin/env python3
"""torch-training: one real PyTorch training loop under three allocators, on a GPU.

  torch          PyTorch's own caching allocator
  tidal-device   tidal.torch with tidal's pooled device memory (the core's default placement)
  tidal-managed  tidal.torch with a rules policy placing every tensor in managed memory, under a
                 [migration] budget smaller than the working set

The model is an MLP of ~105 M fp32 parameters (6 hidden 4096x4096 layers and a 1000-way
head) trained with AdamW on synthetic data drawn on the GPU from a seeded generator, with
deterministic algorithms, so every run's losses must match PyTorch's own run. Each
configuration runs in its own process: an allocator can only be chosen before PyTorch
initialises CUDA. Per run: median step time after the warm-up (each step ends with
torch.cuda.synchronize()), and peak device memory measured identically in every run — the
device's used memory (cudaMemGetInfo: total - free) sampled after every step, minus the same
reading taken before the model was built.

Targets: tidal-device step time <= 1.03x PyTorch's and its peak <= PyTorch's; tidal-managed
completes; every tidal run's losses within 1e-5 (relative) of PyTorch's.

  torch_training.py [--steps 250] [--warmup 20] [--batch 2048] [--out FILE.json]
                    [--configs torch,tidal-device,tidal-managed] [--repeat N]
                    [--budget BYTES] [--pool-growth SIZE] [--library PATH/libtidal.so]
  torch_training.py --oom-check [--out FILE.json]

--oom-check installs tidal and proves that a 1 TiB torch.empty raises torch.OutOfMemoryError
carrying tidal's message (the default run does this check too). tidal is imported from
PYTHONPATH, else from bindings/python of this source tree; libtidal from TIDAL_LIBRARY or
--library.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CONFIGS = ("torch", "tidal-device", "tidal-managed")
MiB = 1 << 20
GiB = 1 << 30
MANAGED_LIMIT = 16 * GiB  # the bound on managed memory in total

STEP_RATIO_TARGET = 1.03
PEAK_RATIO_TARGET = 1.0
LOSS_RTOL = 1e-5


# ============================================================================= configurations
def tidal_config(name, budget, pool_growth):
    """The TOML each tidal run uses (also written into the JSON)."""
    lines = ['runtime = "cuda"', 'log_level = "warn"']
    if name == "tidal-managed":
        # Every tensor the allocator asks for carries the tag "torch" (torch_allocator.cpp).
        lines += ['policies = ["rules"]', "[[policy.rules.rule]]", 'tag = "torch"', 'kind = "managed"',
                  "[migration]", f'budget = "{budget}"']
    # PyTorch frees on its autograd thread what the main thread allocates: per-thread caches
    # would keep those blocks from the other thread and raise the peak.
    # PyTorch packs its small tensors into shared 2 MiB blocks; size classes would hold a slab
    # per class. small_max = 0 sends everything to the best-fit pool, as PyTorch does.
    lines += ["[pool]", f'growth = "{pool_growth}"', "thread_cache_blocks = 0", 'thread_cache_large = "0"',
              'small_max = "0"']
    return "\n".join(lines) + "\n"


# ============================================================================= worker
def build_model(torch, width, layers, classes):
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    blocks.append(torch.nn.Linear(width, classes))
    return torch.nn.Sequential(*blocks)


def used_device_memory(torch):
    free, total = torch.cuda.mem_get_info()
    return total - free


def worker(args):
    # Deterministic cuBLAS needs its workspace configuration before CUDA starts.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    result = {"config": args.worker}
    ctx = None
    if args.worker != "torch":
        import tidal.torch
        with open(args.tidal_config) as f:
            result["tidal_config"] = f.read()
        ctx = tidal.torch.install(args.tidal_config)
        result["tidal"] = {"version": tidal.version(), "library": tidal.library_path(),
                           "runtime": ctx.system_info().runtime_detail}

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=True)
    # Deterministic mode also fills every torch.empty with NaN: extra kernels a real program
    # would not run, in every configuration alike. Off, so the timing measures the training.
    if hasattr(torch.utils, "deterministic"):
        torch.utils.deterministic.fill_uninitialized_memory = False

    if args.worker == "oom":
        return oom_check(torch, result)

    device = torch.device("cuda", 0)
    torch.cuda.init()
    torch.cuda.synchronize()
    baseline = used_device_memory(torch)

    torch.manual_seed(args.seed)
    model = build_model(torch, args.width, args.layers, args.classes)  # initialised on the CPU
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    data = torch.Generator(device=device)
    data.manual_seed(args.seed + 1)
    result["parameters"] = sum(p.numel() for p in model.parameters())

    losses, step_s, peak = [], [], 0
    for _ in range(args.steps):
        t0 = time.perf_counter()
        x = torch.randn(args.batch, args.width, device=device, generator=data)
        y = torch.randint(0, args.classes, (args.batch,), device=device, generator=data)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        step_s.append(time.perf_counter() - t0)
        losses.append(loss.item())
        peak = max(peak, used_device_memory(torch))

    timed = step_s[args.warmup:]
    result.update({
        "steps": len(losses),
        "losses": losses,
        "median_step_ms": statistics.median(timed) * 1e3,
        "mean_step_ms": statistics.fmean(timed) * 1e3,
        "min_step_ms": min(timed) * 1e3,
        "baseline_used_bytes": baseline,
        "peak_used_bytes": peak - baseline,
    })
    if ctx is not None:
        stats = tidal.torch.memory_stats(device)
        result["tidal_memory_stats"] = stats
        result["managed_high_water_bytes"] = stats["tidal.pool.managed.reserved_high_water"]
    return result


def oom_check(torch, result):
    """Out of memory through tidal must be torch.OutOfMemoryError with tidal's message, and the
    allocator must keep working afterwards."""
    import tidal.torch
    checks = {}
    huge = 1 << 40
    try:
        t = torch.empty(huge, dtype=torch.uint8, device="cuda")
        checks["oom_raised"] = False
        checks["oom_detail"] = f"no error: data_ptr() = {t.data_ptr():#x}"
    except torch.OutOfMemoryError as e:
        message = str(e)
        checks["oom_raised"] = True
        checks["oom_is_torch_cuda_oom"] = isinstance(e, torch.cuda.OutOfMemoryError)
        checks["oom_carries_tidal_message"] = ("tidal.torch" in message and
                                               "TIDAL_ERROR_OUT_OF_MEMORY" in message and
                                               str(huge) in message)
        checks["oom_detail"] = message.splitlines()[0][:500]
    except Exception as e:  # the wrong type: the check fails and says which
        checks["oom_raised"] = False
        checks["oom_detail"] = f"{type(e).__module__}.{type(e).__name__}: {e}"[:500]
    stats = tidal.torch.memory_stats()
    checks["num_ooms_counted"] = stats["num_ooms"] == 1
    ones = torch.ones(1 << 20, device="cuda")
    checks["allocates_after_oom"] = ones.sum().item() == float(1 << 20)
    empty = torch.empty(0, device="cuda")
    checks["size_zero_is_null"] = empty.data_ptr() == 0 and empty.numel() == 0
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        twice = torch.ones(1 << 20, device="cuda") * 2
    side.synchronize()
    checks["side_stream"] = twice.sum().item() == float(2 << 20)
    held = tidal.torch.memory_stats()["allocated_bytes.all.current"]
    checks["stats_count_live_tensors"] = held >= 2 * (4 << 20)
    del ones, twice
    torch.cuda.synchronize()
    checks["stats_drop_after_free"] = tidal.torch.memory_stats()["allocated_bytes.all.current"] < held
    result["checks"] = checks
    result["passed"] = all(v for k, v in checks.items() if k != "oom_detail")
    return result


# ============================================================================= driver
def run_worker(name, args, config_text, tmp):
    result_path = os.path.join(tmp, f"{name}-{time.monotonic_ns()}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--result", result_path,
           "--steps", str(args.steps), "--warmup", str(args.warmup), "--batch", str(args.batch),
           "--width", str(args.width), "--layers", str(args.layers), "--classes", str(args.classes),
           "--seed", str(args.seed)]
    if config_text is not None:
        path = os.path.join(tmp, f"{name}.toml")
        with open(path, "w") as f:
            f.write(config_text)
        cmd += ["--tidal-config", path]
    env = dict(os.environ)
    env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if args.library:
        env["TIDAL_LIBRARY"] = os.path.abspath(args.library)
    package = os.path.join(SOURCE_ROOT, "bindings", "python")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), package) if p)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0 or not os.path.exists(result_path):
        return {"config": name, "failed": True, "returncode": proc.returncode, "wall_s": wall,
                "stderr": proc.stderr[-4000:], "stdout": proc.stdout[-2000:]}
    with open(result_path) as f:
        result = json.load(f)
    result["wall_s"] = wall
    if proc.stderr.strip():
        result["stderr"] = proc.stderr[-2000:]
    return result


def max_relative_difference(losses, reference):
    if len(losses) != len(reference):
        return float("inf")
    return max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(losses, reference))


def parse_size(text):
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[:-len(unit)]) * factor)
    return int(text)


def machine():
    info = {"hostname": platform.node(), "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        info["gpus"] = smi.stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        info["gpus"] = []
    try:
        probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
                               capture_output=True, text=True, timeout=120)
        info["torch"], info["cuda"] = probe.stdout.split()
    except (OSError, subprocess.SubprocessError, ValueError):
        pass
    return info


def aggregate(runs):
    """One summary per configuration over its repeats."""
    ok = [r for r in runs if not r.get("failed")]
    if not ok:
        return {"failed": True, "errors": [r.get("stderr", "") for r in runs]}
    return {
        "failed": len(ok) != len(runs),
        "median_step_ms": statistics.median(r["median_step_ms"] for r in ok),
        "peak_used_bytes": max(r["peak_used_bytes"] for r in ok),
        "steps": min(r["steps"] for r in ok),
        "runs": len(ok),
    }


def driver(args):
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in configs:
        if c not in CONFIGS:
            sys.exit(f"torch_training: unknown configuration {c!r}; known: {', '.join(CONFIGS)}")
    report = {"machine": machine(), "parameters": vars(args), "targets": {
        "step_ratio_max": STEP_RATIO_TARGET, "peak_ratio_max": PEAK_RATIO_TARGET,
        "loss_rtol": LOSS_RTOL, "managed_bytes_max": MANAGED_LIMIT}}
    runs = {c: [] for c in configs}
    budget = args.budget
    with tempfile.TemporaryDirectory(prefix="tidal-torch-bench-") as tmp:
        if args.fresh_cache:
            os.environ["TIDAL_CACHE_DIR"] = os.path.join(tmp, "cache")  # the workers inherit it
        for rep in range(args.repeat):
            for name in configs:
                if name == "tidal-managed" and budget is None:
                    torch_runs = [r for r in runs.get("torch", []) if not r.get("failed")]
                    # Half of what PyTorch's own run needed: the budget is smaller than the
                    # working set by construction.
                    need = torch_runs[0]["peak_used_bytes"] if torch_runs else 2 * GiB
                    budget = f"{max(64 * MiB, need // 2) // MiB}MiB"
                text = None if name == "torch" else tidal_config(name, budget, args.pool_growth)
                r = run_worker(name, args, text, tmp)
                r["repeat"] = rep
                runs[name].append(r)
                status = "FAILED" if r.get("failed") else f"{r['median_step_ms']:.2f} ms/step"
                print(f"  {name:14s} run {rep + 1}/{args.repeat}: {status}", flush=True)
        oom = run_worker("oom", args, tidal_config("tidal-device", budget, args.pool_growth), tmp) \
            if not args.skip_oom_check else None

    summary = {c: aggregate(rs) for c, rs in runs.items()}
    report["runs"] = runs
    report["summary"] = summary
    report["managed_budget"] = budget
    verdicts = {}
    reference = next((r["losses"] for r in runs.get("torch", []) if not r.get("failed")), None)
    for name in configs:
        if name == "torch" or summary[name].get("failed"):
            continue
        if reference is not None:
            diff = max(max_relative_difference(r["losses"], reference) for r in runs[name] if not r.get("failed"))
            summary[name]["max_rel_loss_diff"] = diff
            verdicts[f"{name}: losses within {LOSS_RTOL:g} of torch"] = diff <= LOSS_RTOL
    t, d, m = summary.get("torch"), summary.get("tidal-device"), summary.get("tidal-managed")
    if t and d and not t["failed"] and not d["failed"]:
        report["step_ratio"] = d["median_step_ms"] / t["median_step_ms"]
        report["peak_ratio"] = d["peak_used_bytes"] / t["peak_used_bytes"]
        verdicts[f"tidal-device step time <= {STEP_RATIO_TARGET}x torch"] = report["step_ratio"] <= STEP_RATIO_TARGET
        verdicts[f"tidal-device peak <= {PEAK_RATIO_TARGET}x torch"] = report["peak_ratio"] <= PEAK_RATIO_TARGET
    if m is not None:
        completed = not m["failed"] and m["steps"] == args.steps
        verdicts["tidal-managed completes under its budget"] = completed
        if completed:
            high = max(r["managed_high_water_bytes"] for r in runs["tidal-managed"])
            summary["tidal-managed"]["managed_high_water_bytes"] = high
            verdicts["tidal-managed: managed memory <= 16 GiB"] = high <= MANAGED_LIMIT
    for name in configs:
        if summary[name].get("failed"):
            verdicts[f"{name} ran"] = False
    if oom is not None:
        report["oom_check"] = oom
        verdicts["1 TiB torch.empty raises torch.OutOfMemoryError with tidal's message"] = \
            bool(oom.get("passed"))
    report["verdicts"] = verdicts
    report["passed"] = all(verdicts.values())

    print_table(report, configs)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {args.out}")
    return 0 if report["passed"] else 1


def print_table(report, configs):
    summary = report["summary"]
    print()
    print(f"{'config':14s} {'ms/step (median)':>17s} {'peak used MiB':>14s} {'max rel loss diff':>18s}")
    for name in configs:
        s = summary[name]
        if s.get("failed") and "median_step_ms" not in s:
            print(f"{name:14s} FAILED")
            for run in report["runs"][name]:
                if run.get("failed"):
                    print("   " + run.get("stderr", "").strip().replace("\n", "\n   ")[-1500:])
            continue
        diff = s.get("max_rel_loss_diff")
        print(f"{name:14s} {s['median_step_ms']:17.3f} {s['peak_used_bytes'] / MiB:14.1f} "
              f"{'-' if diff is None else f'{diff:.2e}':>18s}")
    if "step_ratio" in report:
        print(f"tidal-device / torch: step time {report['step_ratio']:.4f}x, peak {report['peak_ratio']:.4f}x")
    if "managed_budget" in report and "tidal-managed" in configs:
        print(f"tidal-managed budget: {report['managed_budget']}")
    oom = report.get("oom_check")
    if oom is not None:
        print(f"oom check: {'pass' if oom.get('passed') else 'FAIL'}: {oom.get('checks', {}).get('oom_detail', oom.get('stderr', ''))[:300]}")
    for what, ok in report["verdicts"].items():
        print(f"  [{'pass' if ok else 'FAIL'}] {what}")
    print("PASSED" if report["passed"] else "FAILED")


def oom_only(args):
    with tempfile.TemporaryDirectory(prefix="tidal-torch-oom-") as tmp:
        r = run_worker("oom", args, tidal_config("tidal-device", None, args.pool_growth), tmp)
    for k, v in r.get("checks", {}).items():
        print(f"  {k}: {v}")
    if r.get("failed"):
        print(r.get("stderr", ""))
    print("PASSED" if r.get("passed") else "FAILED")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"machine": machine(), "oom_check": r}, f, indent=2)
    return 0 if r.get("passed") else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=250)
    p.add_argument("--warmup", type=int, default=20, help="steps left out of the timing")
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--layers", type=int, default=6, help="hidden width x width layers")
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--repeat", type=int, default=1, help="run each configuration this many times")
    p.add_argument("--budget", help="tidal-managed's [migration] budget (default: half of torch's peak)")
    p.add_argument("--pool-growth", default="2MiB",
                   help="[pool] growth of the tidal runs (2MiB: large blocks get chunks of their "
                        "own size, as PyTorch's allocator gives blocks over 10 MB)")
    p.add_argument("--library", help="libtidal.so to load (sets TIDAL_LIBRARY for the runs)")
    p.add_argument("--fresh-cache", action="store_true",
                   help="compile the allocator shim into a temporary cache instead of ~/.cache/tidal")
    p.add_argument("--skip-oom-check", action="store_true")
    p.add_argument("--oom-check", action="store_true", help="only the out-of-memory check")
    p.add_argument("--out", help="write the report as JSON")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--tidal-config", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.steps <= args.warmup:
        p.error("--steps must exceed --warmup")
    if args.budget is not None:
        parse_size(args.budget)  # fail here, not in a worker
    if args.worker:
        result = worker(args)
        with open(args.result, "w") as f:
            json.dump(result, f)
        return 0
    if args.oom_check:
        return oom_only(args)
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())

"""The GEMMs tiletuned serves against torch, in one process on one GPU:
x @ W.t() in bf16 for each shape and chain, as an inference server runs them
(--dtype f32-tf32: f32 with tf32 allowed, in torch too; --b-layout row:
x @ W with W stored [k][n]).

It submits one tuning job for every key (timing the cold tuning), then for
each key asks the daemon what it serves (Lookup + GetKernel, through the
Python package), checks the served kernel against a float64 reference on
fresh inputs, and times in interleaved rounds, with L2 cleaned before every
call (a read sweep over 2x the L2, so no dirty lines are written back inside
a timed call) and the GPU kept busy while the call is enqueued, so the events
time the GPU work alone; the host time each call took to enqueue is reported
beside it (Python, the launcher, torch's dispatcher):

  tiletune     the served kernel (a TUNED record), or nothing for VENDOR
  F.linear     torch's own call (cuBLAS; x @ W for a row-major W), then
               the chain as torch ops
  addmm        torch's fused epilogue where it has one (bias: addmm,
               bias+gelu_tanh: _addmm_activation), else F.linear's time

The chain "swiglu" is a gated key instead (gate="swiglu": silu(x @ Wg.t()) *
(x @ Wu.t()), one served kernel): F.linear is then the two projections and
silu * mul as torch ops (Hugging Face's LlamaMLP), addmm the merged [2n][k]
weight in one F.linear, chunked, then silu * mul (the unfused sequence vLLM
runs without its own silu_and_mul kernel).

and prints ms, ratios (torch / tiletune) and the fraction of the roofline
of this GPU, measured at the start of the run: the larger of FLOPs / the
best matmul rate torch reaches in the run's dtype (8192^3) and bytes / the
copy bandwidth (a 1 GiB device-to-device copy), over the time.

  python3 served_vs_torch.py --server unix:/path --trusted-key KEY \
      [--shapes "m,n,k;..."] [--chains "plain,bias+gelu_tanh"] [--strategy exhaustive]
      [--max-variants N] [--dtype bf16|f32-tf32] [--b-layout col|row] [--json FILE]
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

import tiletune
from tiletune.v1 import jobs_pb2, records_pb2, tiletune_pb2

DEFAULT_SHAPES = ("1,4096,4096;16,4096,4096;16,6144,4096;16,14336,4096;16,4096,14336;"
                  "1,14336,4096;64,4096,4096;2048,4096,4096;2048,6144,4096;2048,14336,4096;"
                  "2048,4096,14336;4096,4096,4096;4096,6144,4096;4096,14336,4096;"
                  "4096,4096,14336")
TORCH_ACT = {"relu": F.relu, "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"),
             "silu": F.silu}


def measured_peaks(dtype):
    """This GPU's reachable FLOP rate in `dtype` and copy bandwidth, best of 10."""
    def best_seconds(fn):
        fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best = float("inf")
        for _ in range(10):
            start.record()
            fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end) / 1e3)
        return best
    a = torch.randn(8192, 8192, device="cuda", dtype=dtype)
    flops = 2 * 8192**3 / best_seconds(lambda: a @ a)
    src = torch.empty(1 << 30, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    copy = 2 * src.numel() / best_seconds(lambda: dst.copy_(src))
    return flops, copy


def parse_shapes(text):
    return [tuple(int(v) for v in s.split(",")) for s in text.split(";") if s.strip()]


def chain_of(name):
    return [] if name in ("plain", "swiglu") else name.split("+")


class Cleaner:
    """Reads a buffer of twice the L2 so that a timed call starts with its
    operands out of cache and no dirty lines to write back."""

    def __init__(self):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.buf = torch.ones(2 * l2 // 4, dtype=torch.float32, device="cuda")
        self.sink = torch.empty((), device="cuda")

    def __call__(self):
        torch.sum(self.buf, dim=0, out=self.sink)


# GPU cycles of torch.cuda._sleep queued ahead of each timed call (about
# 100 us): the host's launch work for the call ends while the GPU still
# spins, so the events time the kernels alone, not Python or the launcher.
SPIN_CYCLES = 200_000


def timed_us(fn, clean):
    """(GPU microseconds between the events around fn, host microseconds fn
    took to enqueue its work)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    clean()
    torch.cuda._sleep(SPIN_CYCLES)
    start.record()
    host = time.perf_counter()
    fn()
    host = time.perf_counter() - host
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3, host * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--trusted-key", required=True)
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--chains", default="plain,bias+gelu_tanh")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--max-variants", type=int, default=None)
    ap.add_argument("--strategy", default="exhaustive",
                    help="the tuning job's strategy: exhaustive, random or annealing")
    ap.add_argument("--dtype", choices=("bf16", "f32-tf32"), default="bf16",
                    help="operands and output; f32-tf32 allows tf32 in the key and in torch")
    ap.add_argument("--b-layout", choices=("col", "row"), default="col",
                    help="W stored [n][k] (x @ W.t(), F.linear's) or [k][n] (x @ W)")
    args = ap.parse_args()
    tf32 = args.dtype == "f32-tf32"
    # What a user who allows tf32 gets from torch: cuBLAS on tf32 tensor cores.
    torch.backends.cuda.matmul.allow_tf32 = tf32
    dtype = torch.float32 if tf32 else torch.bfloat16
    b_col = args.b_layout == "col"

    client = tiletune.Client(args.server, timeout=60.0, trusted_keys=[args.trusted_key])
    shapes, chains = parse_shapes(args.shapes), args.chains.split(",")
    keys = {(s, c): tiletune.key("gemm", {"m": s[0], "n": s[1], "k": s[2]},
                                 dtype="f32" if tf32 else "bf16", chain=chain_of(c),
                                 layouts={"b": args.b_layout},
                                 gate="swiglu" if c == "swiglu" else None)
            for s in shapes for c in chains}
    for key in keys.values():
        key.allow_tf32 = tf32
    started = time.monotonic()
    job_id = client.submit_job(list(keys.values()), max_variants=args.max_variants,
                               strategy=jobs_pb2.Strategy.Value("STRATEGY_" + args.strategy.upper()),
                               name="served-vs-torch")
    final = client.wait_job(job_id, timeout=3600.0)
    tuning_s = time.monotonic() - started
    print(f"tuning job: {len(keys)} keys in {tuning_s:.1f} s "
          f"({tuning_s / len(keys):.1f} s a key), state {final.state}", flush=True)

    peak_flops, peak_bytes = measured_peaks(dtype)
    print(f"{torch.cuda.get_device_name(0)}: {args.dtype} matmul {peak_flops / 1e12:.0f} TFLOP/s, "
          f"copy {peak_bytes / 1e12:.2f} TB/s", flush=True)
    clean = Cleaner()
    rows = []
    for (shape, chain), key in keys.items():
        m, n, k = shape
        ops = chain_of(chain)
        x = torch.randn(m, k, device="cuda", dtype=dtype)
        w = torch.randn(*((n, k) if b_col else (k, n)), device="cuda", dtype=dtype) / k ** 0.5
        w_kn = w.t() if b_col else w  # the k x n matrix x multiplies
        bias = torch.randn(n, device="cuda", dtype=dtype) if "bias" in ops else None
        act = next((o for o in ops if o in TORCH_ACT), None)
        gated = chain == "swiglu"
        w_up = torch.randn_like(w) / k ** 0.5 if gated else None
        w_up_kn = (w_up.t() if b_col else w_up) if gated else None

        def product(weight):
            return F.linear(x, weight) if b_col else x @ weight

        def linear():
            if gated:
                return F.silu(product(w)) * product(w_up)
            if b_col:
                y = F.linear(x, w, bias)
            else:
                y = x @ w if bias is None else x @ w + bias
            return TORCH_ACT[act](y) if act else y

        fused = None
        if gated:
            merged = torch.cat([w, w_up], dim=0 if b_col else 1)

            def fused():
                g, u = product(merged).chunk(2, dim=-1)
                return F.silu(g) * u
        elif bias is not None and act == "gelu_tanh":
            def fused():
                return torch._addmm_activation(bias, x, w_kn, use_gelu=True)
        elif bias is not None and act is None:
            def fused():
                return torch.addmm(bias, x, w_kn)

        answer = client.lookup(key, device="cuda:0")
        record = answer.record if answer.HasField("record") else None
        served = None
        why = "miss"
        if answer.result == tiletune_pb2.LookupResponse.RESULT_HIT:
            kernel = client.get_kernel(key, device="cuda:0")
            served = kernel.cuda("cuda:0") if kernel is not None else None
            why = "served" if served is not None else client.last_fallback.reason
        elif record is not None and record.winner == records_pb2.WINNER_VENDOR:
            why = "VENDOR: " + record.baseline_name

        def ours():
            y = torch.empty(m, n, device="cuda", dtype=dtype)
            fields = ("a", "b", "b_up", "c") if gated else ("a", "b", "c")
            tensors = [x, w] + ([w_up] if gated else []) + [y] + ([bias] if bias is not None else [])
            served.bind(fields, ())(torch.cuda.current_stream().cuda_stream,
                                    [t.data_ptr() for t in tensors], ())
            return y

        error = None
        if served is not None:
            ref = x.double() @ w_kn.double()
            if gated:
                ref = F.silu(ref) * (x.double() @ w_up_kn.double())
            if bias is not None:
                ref = ref + bias.double()
            if act:
                ref = TORCH_ACT[act](ref)
            got = ours().double()
            error = ((got - ref).norm() / ref.norm()).item()

        contenders = {"F.linear": linear}
        if fused is not None:
            contenders["addmm"] = fused
        if served is not None:
            contenders["tiletune"] = ours
        for fn in contenders.values():
            fn()
        times = {name: [] for name in contenders}
        host = {name: [] for name in contenders}
        for _ in range(args.rounds):
            for name, fn in contenders.items():
                gpu_us, host_us = timed_us(fn, clean)
                times[name].append(gpu_us)
                host[name].append(host_us)
        med = {name: statistics.median(t) for name, t in times.items()}
        host_med = {name: statistics.median(t) for name, t in host.items()}
        torch_best = min(med["F.linear"], med.get("addmm", float("inf")))
        products = 2 if gated else 1
        floor_us = max(2 * products * m * n * k / peak_flops,
                       dtype.itemsize * (m * k + products * n * k + m * n) / peak_bytes) * 1e6
        row = {"m": m, "n": n, "k": k, "chain": chain, "served": why,
               "kernel": record.config.kernel_name if record is not None else "",
               "daemon_speedup": record.speedup if record is not None else None,
               "baseline": record.baseline_name if record is not None else "",
               "rel_error": error, "us": med, "host_us": host_med,
               "ratio_vs_linear": med["F.linear"] / med["tiletune"] if "tiletune" in med else None,
               "ratio_vs_best_torch": torch_best / med["tiletune"] if "tiletune" in med else None,
               "roofline_tiletune": floor_us / med["tiletune"] if "tiletune" in med else None,
               "roofline_torch": floor_us / torch_best}
        rows.append(row)
        print(json.dumps(row), flush=True)

    print(f"\n{'shape':>18} {'chain':>14} {'tiletune':>9} {'F.linear':>9} {'addmm':>9} "
          f"{'x linear':>8} {'x best':>7} {'roof':>5} {'host tt':>7} {'host F.l':>8}  served")
    for r in rows:
        us = r["us"]
        tt = f"{us['tiletune']:9.1f}" if "tiletune" in us else f"{'-':>9}"
        add = f"{us['addmm']:9.1f}" if "addmm" in us else f"{'-':>9}"
        ratio = f"{r['ratio_vs_linear']:8.3f}" if r["ratio_vs_linear"] else f"{'-':>8}"
        best = f"{r['ratio_vs_best_torch']:7.3f}" if r["ratio_vs_best_torch"] else f"{'-':>7}"
        roof = r["roofline_tiletune"] or r["roofline_torch"]
        hostt = f"{r['host_us']['tiletune']:7.1f}" if "tiletune" in us else f"{'-':>7}"
        print(f"{r['m']:>6}x{r['n']:>5}x{r['k']:>5} {r['chain']:>14} {tt} {us['F.linear']:9.1f} "
              f"{add} {ratio} {best} {roof:5.2f} {hostt} {r['host_us']['F.linear']:8.1f}  "
              f"{r['served']} {r['kernel']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "dtype": args.dtype,
                       "b_layout": args.b_layout, "peak_flops": peak_flops,
                       "copy_bytes_per_second": peak_bytes, "tuning_seconds": tuning_s,
                       "keys": len(keys), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

"""Host time per call of tiletune.torch's ops against torch's own, on one
GPU: what a Python inference server pays on its CPU for each op it runs
outside a CUDA graph (at decode, where the kernels take microseconds, this
decides whether the step is bound by the host).

For each op of a decoder layer at decode (linear, linear with a residual,
SwiGLU, RMSNorm, attention over a KV cache) it first asks tiletune.torch
until the daemon has tuned the key (tune on miss), then, with the guard
against torch off so that the served kernel runs whatever its speed, times
batches of `calls` calls of the tiletune op and of torch's op back to back
(the wall clock over the loop; the GPU works through the queue meanwhile)
and reports the median µs per call and the ratio. A cProfile of the
tiletune loop names where its host time goes.

  python3 python_host_cost.py --server unix:/path --trusted-key KEY [--json FILE]

or against a fresh daemon on the lent GPU:

  SERVED_SCRIPT=bench/gpu/python_host_cost.py \\
      bash bench/gpu/served_vs_torch.sh PYTHON_DIR OUT
"""

import argparse
import cProfile
import io
import json
import pstats
import statistics
import time

import torch
import torch.nn.functional as F

import tiletune.torch as tt

TOKENS, HIDDEN, INTERMEDIATE = 16, 4096, 14336
Q_HEADS, KV_HEADS, HEAD_DIM, KV_LEN = 32, 8, 128, 2048


def ops():
    """{name: (tiletune's call, torch's call)} on fresh bf16 tensors."""
    r = lambda *s: (torch.randn(*s, device="cuda") / s[-1] ** 0.5).to(torch.bfloat16)
    x, w, res = r(TOKENS, HIDDEN), r(HIDDEN, HIDDEN), r(TOKENS, HIDDEN)
    wg, wu = r(INTERMEDIATE, HIDDEN), r(INTERMEDIATE, HIDDEN)
    norm_w = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
    q = r(TOKENS, Q_HEADS, 1, HEAD_DIM)
    k, v = r(TOKENS, KV_HEADS, KV_LEN, HEAD_DIM), r(TOKENS, KV_HEADS, KV_LEN, HEAD_DIM)
    return {
        "linear": (lambda: tt.linear(x, w), lambda: F.linear(x, w)),
        "linear+residual": (lambda: tt.linear(x, w, residual=res),
                            lambda: F.linear(x, w) + res),
        "swiglu": (lambda: tt.swiglu(x, wg, wu), lambda: F.silu(F.linear(x, wg)) * F.linear(x, wu)),
        "rms_norm": (lambda: tt.rms_norm(x, norm_w),
                     lambda: F.rms_norm(x, (HIDDEN,), norm_w, 1e-5)),
        "attention": (lambda: tt.attention(q, k, v),
                      lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
    }


def wait_for_tuning(contenders, timeout):
    """Calls every tiletune op until none of its decisions is a miss (the
    daemon tunes each missed key): {op: its decision}."""
    names = {}
    for op, (ours, _) in contenders.items():
        before = set(tt.decisions())
        ours()
        names[op] = next(iter(set(tt.decisions()) - before))
    deadline = time.monotonic() + timeout
    while True:
        decisions = tt.decisions()
        if not any(decisions[n].reason.startswith("miss") for n in names.values()) \
                or time.monotonic() > deadline:
            return {op: decisions[n] for op, n in names.items()}
        time.sleep(tt.runtime().retry_seconds)
        for ours, _ in contenders.values():
            ours()


def host_us(fn, calls, batches):
    """Median over `batches` of the host's µs per call in a loop of `calls`."""
    times = []
    for _ in range(batches):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) * 1e6 / calls)
    torch.cuda.synchronize()
    return statistics.median(times)


def profile(fn, calls, top):
    """The `top` functions by own time over `calls` calls of fn, as text."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--trusted-key", action="append")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--tuning-timeout", type=float, default=900)
    parser.add_argument("--profile-top", type=int, default=12)
    parser.add_argument("--json")
    args = parser.parse_args()
    tt.configure(args.server, trusted_keys=args.trusted_key, guard_against_torch=False,
                 timeout=60)
    contenders = ops()
    started = time.monotonic()
    decisions = wait_for_tuning(contenders, args.tuning_timeout)
    print(f"tuned in {time.monotonic() - started:.1f} s; {torch.cuda.get_device_name(0)}, "
          f"torch {torch.__version__}", flush=True)
    rows = []
    print(f"{'op':16} {'runs':9} {'tiletune us':>12} {'torch us':>9} {'torch/tiletune':>15}")
    for name, (ours, theirs) in contenders.items():
        decision = decisions[name]
        for fn in (ours, theirs):
            fn()
        timed = {"tiletune": [], "torch": []}
        for _ in range(3):  # alternated, so drift falls on both
            timed["tiletune"].append(host_us(ours, args.calls, args.batches))
            timed["torch"].append(host_us(theirs, args.calls, args.batches))
        us = {who: statistics.median(t) for who, t in timed.items()}
        row = {"op": name, "runs": decision.runs, "decision": decision.reason, "host_us": us,
               "ratio": us["torch"] / us["tiletune"],
               "profile": profile(ours, args.calls * args.batches, args.profile_top)}
        rows.append(row)
        print(f"{name:16} {decision.runs:9} {us['tiletune']:12.1f} {us['torch']:9.1f} "
              f"{row['ratio']:15.2f}", flush=True)
    for row in rows:
        print(f"\n## {row['op']} ({row['decision']})\n{row['profile']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "calls": args.calls, "batches": args.batches, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

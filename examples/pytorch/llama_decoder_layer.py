"""A Llama-3-8B-shaped decoder layer (hidden 4096, 32 query / 8 KV heads of
128, intermediate 14336, bf16) run three ways: torch eager, torch.compile,
and with tiletune-served kernels (tiletune.torch) for its norms,
projections and attention (tiletune.torch.attention in place of torch's
SDPA; torch modes run SDPA) and its MLP's gate/up projection with the SiLU
gate as one kernel (tiletune.torch.swiglu in place of the merged projection,
chunk, silu and mul).

    python3 examples/pytorch/llama_decoder_layer.py --daemon unix:/run/tiletune/tiletuned.sock \
        --trusted-key HEX --json out.json --plot out.png

It submits one tuning job for every kernel the layer runs (decode with 1,
16 and 64 sequences over a 2048-token KV cache, prefill of 2048 tokens),
watches it, then checks each mode against eager and times, per shape, every
replaced kernel against the torch call it replaces and the whole layer.
`--plot-from out.json --plot out.png` draws the plot from a saved run.
"""

import argparse
import json
import sys
import time

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTERMEDIATE = 4096, 32, 8, 128, 14336
KV_LEN, EPS = 2048, 1e-5
# Outputs of the layer in bf16 against eager's: relative to |eager| + 1.
TOLERANCE = 3e-2
SHAPES = [("decode", 1), ("decode", 16), ("decode", 64), ("prefill", 2048)]


def make_layer(torch, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)

    def weight(*shape, scale):
        return (torch.randn(shape, generator=g, device="cuda") * scale).to(torch.bfloat16)

    q_out = (HEADS + 2 * KV_HEADS) * HEAD_DIM
    return {
        "norm1": (1 + 0.1 * torch.randn(HIDDEN, generator=g, device="cuda")).to(torch.bfloat16),
        "norm2": (1 + 0.1 * torch.randn(HIDDEN, generator=g, device="cuda")).to(torch.bfloat16),
        "qkv": weight(q_out, HIDDEN, scale=HIDDEN ** -0.5),
        "o": weight(HIDDEN, HEADS * HEAD_DIM, scale=(HEADS * HEAD_DIM) ** -0.5),
        "gate_up": weight(2 * INTERMEDIATE, HIDDEN, scale=HIDDEN ** -0.5),
        "down": weight(HIDDEN, INTERMEDIATE, scale=INTERMEDIATE ** -0.5),
    }


def rope(torch, x, positions):
    """Rotary position embedding over the head dim (x: [batch, heads, seq, dim])."""
    half = HEAD_DIM // 2
    freqs = 500000.0 ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angles = positions.float()[:, None] * freqs[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Ops:
    """The layer's norms and projections: torch's, or tiletune.torch's."""

    def __init__(self, torch, tt=None):
        self.F, self.tt = torch.nn.functional, tt

    def norm(self, x, w):
        return self.tt.rms_norm(x, w, eps=EPS) if self.tt else self.F.rms_norm(
            x, (HIDDEN,), w, EPS)

    def attention(self, q, k, v, causal):
        """q [batch, heads, seq, dim], k and v [batch, kv_heads, kv_len, dim]."""
        if self.tt:
            return self.tt.attention(q.contiguous(), k.contiguous(), v.contiguous(),
                                     causal=causal)
        return self.F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)

    def linear(self, x, w, residual=None):
        if self.tt:
            return self.tt.linear(x, w, residual=residual)
        y = self.F.linear(x, w)
        return y + residual if residual is not None else y

    def swiglu(self, x, w_gate_up):
        """silu(x @ gate.T) * (x @ up.T) of the merged [gate; up] weight: one
        gated GEMM with tiletune, the projection, chunk, silu and mul with torch."""
        if self.tt:
            return self.tt.swiglu(x, w_gate_up[:INTERMEDIATE], w_gate_up[INTERMEDIATE:])
        gate, up = self.F.linear(x, w_gate_up).chunk(2, dim=-1)
        return (self.F.silu(gate) * up).contiguous()


def layer_forward(torch, ops, p, x, k_cache, v_cache, phase):
    """x: [tokens, hidden] (decode: one token per sequence; prefill: one
    sequence). Returns the layer's output, [tokens, hidden]."""
    tokens = x.shape[0]
    h = ops.norm(x, p["norm1"])
    qkv = ops.linear(h, p["qkv"])
    q, k, v = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
    if phase == "decode":
        # Each of `tokens` sequences adds its token at position KV_LEN - 1 of its cache.
        q = q.view(tokens, 1, HEADS, HEAD_DIM).transpose(1, 2)
        k = k.view(tokens, 1, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = v.view(tokens, 1, KV_HEADS, HEAD_DIM).transpose(1, 2)
        positions = torch.full((1,), KV_LEN - 1, device=x.device)
        q, k = rope(torch, q, positions), rope(torch, k, positions)
        k_cache[:tokens, :, KV_LEN - 1:] = k
        v_cache[:tokens, :, KV_LEN - 1:] = v
        attn = ops.attention(q, k_cache[:tokens], v_cache[:tokens], causal=False)
        attn = attn.transpose(1, 2).reshape(tokens, HEADS * HEAD_DIM)
    else:
        q = q.view(1, tokens, HEADS, HEAD_DIM).transpose(1, 2)
        k = k.view(1, tokens, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = v.view(1, tokens, KV_HEADS, HEAD_DIM).transpose(1, 2)
        positions = torch.arange(tokens, device=x.device)
        q, k = rope(torch, q, positions), rope(torch, k, positions)
        attn = ops.attention(q, k, v, causal=True)
        attn = attn.transpose(1, 2).reshape(tokens, HEADS * HEAD_DIM)
    x2 = ops.linear(attn.contiguous(), p["o"], residual=x)
    h2 = ops.norm(x2, p["norm2"])
    return ops.linear(ops.swiglu(h2, p["gate_up"]), p["down"], residual=x2)


def attention_shape(phase, tokens):
    """(batch, q_len, kv_len, causal) of the layer's attention."""
    return (tokens, 1, KV_LEN, False) if phase == "decode" else (1, tokens, tokens, True)


def kernel_keys(tiletune, phase, tokens):
    """The tiletune keys of one layer at `tokens` rows, with what each replaces."""
    from tiletune.v1 import kernel_key_pb2

    batch, q_len, kv_len, causal = attention_shape(phase, tokens)
    attention = tiletune.key("attention", {"batch": batch, "q_heads": HEADS,
                                           "kv_heads": KV_HEADS, "q_len": q_len,
                                           "kv_len": kv_len, "head_dim": HEAD_DIM}, dtype="bf16")
    attention.sequence_layout = kernel_key_pb2.SEQUENCE_LAYOUT_BHSD
    if causal:
        attention.attention_mask = kernel_key_pb2.ATTENTION_MASK_CAUSAL
    gemm = lambda n, k, chain=(), gate=None: tiletune.key(
        "gemm", {"m": tokens, "n": n, "k": k}, dtype="bf16", chain=list(chain),
        layouts={"b": "col"}, gate=gate)
    return [
        ("rms_norm", tiletune.key("rmsnorm", {"rows": tokens, "cols": HIDDEN}, dtype="bf16")),
        ("qkv", gemm((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN)),
        ("o+residual", gemm(HIDDEN, HEADS * HEAD_DIM, ["residual_add"])),
        ("gate_up+swiglu", gemm(INTERMEDIATE, HIDDEN, gate="swiglu")),
        ("down+residual", gemm(HIDDEN, INTERMEDIATE, ["residual_add"])),
        ("attention", attention),
    ]


def kernel_calls(torch, tt, p, phase, tokens):
    """(name, tiletune call, torch call) for each replaced kernel at `tokens` rows."""
    F = torch.nn.functional
    ours, theirs = Ops(torch, tt), Ops(torch)
    g = torch.Generator(device="cuda").manual_seed(tokens)
    r = lambda *s: torch.randn(s, generator=g, device="cuda").to(torch.bfloat16)
    x, attn, act = r(tokens, HIDDEN), r(tokens, HEADS * HEAD_DIM), r(tokens, INTERMEDIATE)
    batch, q_len, kv_len, causal = attention_shape(phase, tokens)
    q = r(batch, HEADS, q_len, HEAD_DIM)
    k, v = r(batch, KV_HEADS, kv_len, HEAD_DIM), r(batch, KV_HEADS, kv_len, HEAD_DIM)
    return [
        ("rms_norm", lambda: tt.rms_norm(x, p["norm1"], eps=EPS),
         lambda: F.rms_norm(x, (HIDDEN,), p["norm1"], EPS)),
        ("qkv", lambda: tt.linear(x, p["qkv"]), lambda: F.linear(x, p["qkv"])),
        ("o+residual", lambda: tt.linear(attn, p["o"], residual=x),
         lambda: F.linear(attn, p["o"]) + x),
        ("gate_up+swiglu", lambda: ours.swiglu(x, p["gate_up"]),
         lambda: theirs.swiglu(x, p["gate_up"])),
        ("down+residual", lambda: tt.linear(act, p["down"], residual=x),
         lambda: F.linear(act, p["down"]) + x),
        ("attention", lambda: tt.attention(q, k, v, causal=causal),
         lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)),
    ]


GEMM_DIMS = {"qkv": ((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN), "o+residual": (HIDDEN, HIDDEN),
             "gate_up+swiglu": (INTERMEDIATE, HIDDEN), "down+residual": (HIDDEN, INTERMEDIATE)}


def decision_of(tt, name, phase, tokens):
    """What tiletune.torch decided to run for this kernel (tiletune.torch.Decision)."""
    if name == "rms_norm":
        prefix = f"rmsnorm {tokens}x{HIDDEN} "
    elif name == "attention":
        batch, q_len, kv_len, _ = attention_shape(phase, tokens)
        prefix = f"attention {batch}x{HEADS}/{KV_HEADS}x{q_len}x{kv_len}x{HEAD_DIM} "
    else:
        n, k = GEMM_DIMS[name]
        prefix = f"gemm {tokens}x{n}x{k} "
    return next((d for key, d in tt.decisions().items() if key.startswith(prefix)), None)


def kernel_flops_bytes(name, phase, tokens):
    """FLOPs and bytes moved (minimum) of one replaced kernel, for the roofline."""
    dims = GEMM_DIMS
    if name == "rms_norm":
        return 4 * tokens * HIDDEN, 2 * (2 * tokens * HIDDEN + HIDDEN)
    if name == "attention":
        batch, q_len, kv_len, causal = attention_shape(phase, tokens)
        pairs = q_len * kv_len // (2 if causal else 1)
        return (4 * batch * HEADS * pairs * HEAD_DIM,
                2 * batch * HEAD_DIM * (2 * HEADS * q_len + 2 * KV_HEADS * kv_len))
    n, k = dims[name]
    extra = tokens * n if name.endswith("residual") else 0
    products = 2 if name.endswith("swiglu") else 1  # the gate's and the up projection's
    return (2 * products * tokens * n * k,
            2 * (tokens * k + products * n * k + tokens * n + extra))


def graph_time_us(torch, fn, replays=20):
    """Median µs of one replay of a CUDA graph of `fn` (launch overhead gone,
    as an inference server's decode loop runs)."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return times[len(times) // 2]


def wall_time_us(torch, fn, calls=20):
    """Median µs per call, CPU launch overhead included (synchronized)."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return times[len(times) // 2]


def tune(tiletune, client, max_variants):
    from tiletune.v1 import jobs_pb2

    keys = [k for phase, tokens in SHAPES for _, k in kernel_keys(tiletune, phase, tokens)]
    unique = {k.SerializeToString(deterministic=True): k for k in keys}
    job = client.submit_job(list(unique.values()), max_variants=max_variants,
                            name="llama3-8b-decoder-layer", device="cuda:0")
    print(f"tuning job {job}: {len(unique)} kernels, {max_variants} variants each", flush=True)
    t0 = time.monotonic()
    shown = (jobs_pb2.JobEvent.KIND_ITEM_FINISHED, jobs_pb2.JobEvent.KIND_JOB_FINISHED)
    for event in client.watch_job(job, timeout=3600):
        if event.kind in shown:
            print(f"  [{time.monotonic() - t0:6.1f}s] item {event.item_index}: {event.message}",
                  flush=True)
    state = client.get_job(job).state
    print(f"job finished in {time.monotonic() - t0:.1f}s: {jobs_pb2.JobState.Name(state)}",
          flush=True)
    return job


def run(args):
    import torch

    import tiletune
    import tiletune.torch as tt

    rt = tt.configure(args.daemon, trusted_keys=args.trusted_key or None, timeout=600)
    if not args.no_tune:
        tune(tiletune, rt.client, args.max_variants)
    if args.tune_only:
        return 0
    props = torch.cuda.get_device_properties(0)
    # H200 (SXM) dense bf16 tensor-core peak and HBM3e bandwidth, for the roofline.
    peak_flops, peak_bytes = args.peak_tflops * 1e12, args.peak_tbps * 1e12
    results = {"device": props.name, "torch": torch.__version__, "tolerance": TOLERANCE,
               "shapes": []}
    p = make_layer(torch)
    eager_ops, tiletune_ops = Ops(torch), Ops(torch, tt)
    max_batch = max(t for phase, t in SHAPES if phase == "decode")
    g = torch.Generator(device="cuda").manual_seed(1)
    k_cache = torch.randn((max_batch, KV_HEADS, KV_LEN, HEAD_DIM), generator=g,
                          device="cuda").to(torch.bfloat16)
    v_cache = torch.randn_like(k_cache)
    for phase, tokens in SHAPES:
        x = torch.randn((tokens, HIDDEN), generator=g, device="cuda").to(torch.bfloat16)
        eager = lambda: layer_forward(torch, eager_ops, p, x, k_cache, v_cache, phase)
        served = lambda: layer_forward(torch, tiletune_ops, p, x, k_cache, v_cache, phase)
        compiled_fn = torch.compile(
            lambda x: layer_forward(torch, eager_ops, p, x, k_cache, v_cache, phase))
        compiled = lambda: compiled_fn(x)
        # tiletune's ops inside torch.compile: inductor fuses what is between them.
        served_compiled_fn = torch.compile(
            lambda x: layer_forward(torch, tiletune_ops, p, x, k_cache, v_cache, phase))
        served_compiled = lambda: served_compiled_fn(x)
        modes = (("eager", eager), ("torch.compile", compiled), ("tiletune", served),
                 ("tiletune+compile", served_compiled))
        want = eager().double()
        errors = {}
        for mode, fn in modes[1:]:
            got = fn().double()
            errors[mode] = ((got - want).abs() / (want.abs() + 1)).max().item()
        row = {"phase": phase, "tokens": tokens, "max_error": errors, "kernels": [],
               "layer_graph_us": {}, "layer_wall_us": {}}
        for name, ours, theirs in kernel_calls(torch, tt, p, phase, tokens):
            t_tt, t_torch = tt.compare_us(ours, theirs, ours(), rounds=9)
            flops, moved = kernel_flops_bytes(name, phase, tokens)
            roofline_us = max(flops / peak_flops, moved / peak_bytes) * 1e6
            decision = decision_of(tt, name, phase, tokens)
            row["kernels"].append({"kernel": name, "tiletune_us": t_tt, "torch_us": t_torch,
                                   "runs": decision.runs, "why": repr(decision),
                                   "ratio": t_torch / t_tt, "roofline_us": roofline_us,
                                   "tiletune_roofline_fraction": roofline_us / t_tt,
                                   "torch_roofline_fraction": roofline_us / t_torch})
        for mode, fn in modes:
            row["layer_graph_us"][mode] = graph_time_us(torch, fn)
            row["layer_wall_us"][mode] = wall_time_us(torch, fn)
        results["shapes"].append(row)
        print_row(row)
    results["decisions"] = {name: repr(d) for name, d in tt.decisions().items()}
    print("\nwhat ran, per kernel key:")
    for name, d in sorted(results["decisions"].items()):
        print(f"  {name}: {d}")
    ok = all(e <= TOLERANCE for row in results["shapes"] for e in row["max_error"].values())
    results["outputs_match_eager"] = ok
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        plot(results, args.plot)
    if not ok:
        print(f"FAIL: an output differs from eager by more than {TOLERANCE}", file=sys.stderr)
        return 1
    return 0


def print_row(row):
    print(f"\n{row['phase']} {row['tokens']} tokens: max error vs eager "
          + ", ".join(f"{m} {e:.2e}" for m, e in row["max_error"].items())
          + f" (tolerance {TOLERANCE})")
    print(f"  {'kernel':14} {'tiletune us':>11} {'torch us':>9} {'ratio':>6} "
          f"{'roofline us':>11} {'tt %roof':>8} {'torch %roof':>11}  runs")
    for k in row["kernels"]:
        print(f"  {k['kernel']:14} {k['tiletune_us']:11.1f} {k['torch_us']:9.1f} "
              f"{k['ratio']:6.3f} {k['roofline_us']:11.1f} "
              f"{100 * k['tiletune_roofline_fraction']:7.1f}% "
              f"{100 * k['torch_roofline_fraction']:10.1f}%  {k['runs']}")
    g, w = row["layer_graph_us"], row["layer_wall_us"]
    for label, t in (("layer, CUDA graph", g), ("layer, plain calls", w)):
        print(f"  {label}: " + ", ".join(f"{m} {us:.1f} us" for m, us in t.items()))
        print(f"    tiletune x{t['eager'] / t['tiletune']:.3f} over eager; tiletune+compile "
              f"x{t['torch.compile'] / t['tiletune+compile']:.3f} over torch.compile")


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"no matplotlib here: no plot; draw it later with --plot-from JSON --plot {path}")
        return
    shapes = results["shapes"]
    fig, axes = plt.subplots(1, len(shapes), figsize=(4.2 * len(shapes), 4), sharey=True)
    for ax, row in zip(axes if len(shapes) > 1 else [axes], shapes):
        names = [k["kernel"] for k in row["kernels"]]
        ratios = [k["ratio"] for k in row["kernels"]]
        # Green: tiletune's kernel runs; grey: tiletune.torch runs torch's own op.
        ax.bar(range(len(names)), ratios,
               color=["tab:green" if k["runs"] == "tiletune" else "tab:gray"
                      for k in row["kernels"]])
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(names)), names, rotation=40, ha="right")
        ax.set_title(f"{row['phase']} {row['tokens']} tok")
    axes[0].set_ylabel("torch time / tiletune.torch time (per kernel)")
    fig.suptitle(f"Llama-3-8B decoder layer kernels, tiletune.torch vs torch "
                 f"({results['device']}; green: served kernel runs, grey: torch's op runs)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--daemon", help="tiletuned address (default $TILETUNE_SERVER)")
    parser.add_argument("--trusted-key", action="append",
                        help="hex ed25519 key of the daemon (its ready file's signing_key)")
    parser.add_argument("--max-variants", type=int, default=16)
    parser.add_argument("--no-tune", action="store_true", help="use the records there are")
    parser.add_argument("--tune-only", action="store_true", help="tune, then stop")
    parser.add_argument("--json")
    parser.add_argument("--plot")
    parser.add_argument("--plot-from", help="draw --plot from this saved --json and exit")
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="bf16 dense peak")
    parser.add_argument("--peak-tbps", type=float, default=4.8, help="memory bandwidth")
    args = parser.parse_args()
    if args.plot_from:
        with open(args.plot_from) as f:
            plot(json.load(f), args.plot)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

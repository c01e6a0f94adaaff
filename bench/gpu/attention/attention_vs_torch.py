"""tiletune's attention against torch's in one process on one GPU: for each
shape (prefill and decode, causal and not, grouped-query), what tiletuned
serves through tiletune.torch.attention, torch SDPA as a user calls it (the
backend torch picks) and with its flash and cuDNN backends forced, and the
unfused sequence (two batched matmuls and a softmax, in bf16), timed in
interleaved rounds with CUDA events (tiletune.torch's compare_us), with
ratios (torch / tiletune) and TFLOP/s.

It submits one tuning job for every key first; a shape whose record is
VENDOR (or that misses) shows tiletune.torch running torch's SDPA, and says
so. Each tiletune output is checked against SDPA's math backend in f32.

  python3 attention_vs_torch.py --server unix:/path --trusted-key KEY \\
      [--shapes "B,Hq,Hkv,S,T,causal;..."] [--max-variants N] [--json FILE]

or against a fresh daemon on the lent GPU:

  SERVED_SCRIPT=bench/gpu/attention/attention_vs_torch.py \\
      bash bench/gpu/served_vs_torch.sh PYTHON_DIR OUT
"""

import argparse
import json

import torch
import torch.nn.functional as F

import tiletune
import tiletune.torch as tt
from tiletune.v1 import jobs_pb2

# Prefill B4 H32 S4096 D128 (MHA and GQA 32/8, causal and not, S 2048 to
# 16384) and decode (batch 16, 32/8 heads, KV 2048 to 32768).
DEFAULT_SHAPES = ("4,32,32,4096,4096,0;4,32,32,4096,4096,1;4,32,8,4096,4096,0;"
                  "4,32,8,4096,4096,1;4,32,32,2048,2048,1;4,32,32,8192,8192,1;"
                  "4,32,32,16384,16384,1;16,32,8,1,2048,0;16,32,8,1,8192,0;"
                  "16,32,8,1,32768,0")
HEAD_DIM = 128
# The unfused sequence materialises the scores: skipped past this many bytes.
MAX_UNFUSED_SCORE_BYTES = 8 << 30
# The f32 reference checks a slice of the heads past this many score bytes.
MAX_CHECK_SCORE_BYTES = 8 << 30
TOLERANCE = 2e-2


def parse_shapes(text):
    shapes = []
    for s in text.split(";"):
        if s.strip():
            b, hq, hkv, sq, skv, causal = (int(v) for v in s.split(","))
            shapes.append((b, hq, hkv, sq, skv, bool(causal)))
    return shapes


def flops(b, hq, sq, skv, causal):
    pairs = sum(min(skv, max(0, i + skv - sq + 1)) for i in range(sq)) if causal else sq * skv
    return 4 * b * hq * pairs * HEAD_DIM


def sdpa(backend, q, k, v, causal):
    from torch.nn.attention import sdpa_kernel
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def unfused(q, k, v, causal):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    s = torch.matmul(q, k.transpose(-1, -2)) * HEAD_DIM ** -0.5
    if causal:
        sq, skv = q.shape[2], k.shape[2]
        hidden = torch.ones(sq, skv, dtype=torch.bool, device=q.device).tril(skv - sq)
        s = s.masked_fill(hidden.logical_not(), float("-inf"))
    return torch.matmul(torch.softmax(s, -1), v)


def key_of(b, hq, hkv, sq, skv, causal):
    return tt._attention_key(b, hq, hkv, sq, skv, HEAD_DIM, torch.bfloat16, causal)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--trusted-key", action="append")
    parser.add_argument("--shapes", default=DEFAULT_SHAPES)
    parser.add_argument("--max-variants", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json")
    args = parser.parse_args()
    from torch.nn.attention import SDPBackend

    shapes = parse_shapes(args.shapes)
    rt = tt.configure(args.server, trusted_keys=args.trusted_key, guard_against_torch=False,
                      timeout=600)
    job = rt.client.submit_job([key_of(*s) for s in shapes], max_variants=args.max_variants,
                               name="attention-vs-torch", device="cuda:0")
    for _ in rt.client.watch_job(job, timeout=7200):
        pass
    print(f"tuning job {job}: {jobs_pb2.JobState.Name(rt.client.get_job(job).state)}")
    rows = []
    print(f"{'shape':34} {'runs':8} {'tiletune':>9} {'sdpa':>9} {'flash':>9} {'cudnn':>9}"
          f" {'unfused':>9}  {'tt TF/s':>8} {'x sdpa':>7} {'x flash':>7} {'x cudnn':>7}"
          f" {'x unfused':>9}")
    for b, hq, hkv, sq, skv, causal in shapes:
        g = torch.Generator(device="cuda").manual_seed(sq * 31 + skv)
        r = lambda *s: (torch.rand(s, generator=g, device="cuda") * 2 - 1).to(torch.bfloat16)
        q, k, v = r(b, hq, sq, HEAD_DIM), r(b, hkv, skv, HEAD_DIM), r(b, hkv, skv, HEAD_DIM)
        ours = lambda: tt.attention(q, k, v, causal=causal)
        got = ours()
        decision = next(d for name, d in tt.decisions().items()
                        if name.startswith(f"attention {b}x{hq}/{hkv}x{sq}x{skv}x{HEAD_DIM} "))
        # The math backend materialises f32 scores: checked on batch entry 0
        # and the query heads of its first KV heads where all would not fit.
        fits = lambda entries, kv_heads: (
            entries * kv_heads * (hq // hkv) * sq * skv * 4 <= MAX_CHECK_SCORE_BYTES)
        entries, kv_heads = (b, hkv) if fits(b, hkv) else (1, hkv)
        while kv_heads > 1 and not fits(entries, kv_heads):
            kv_heads //= 2
        heads = kv_heads * (hq // hkv)
        want = sdpa(SDPBackend.MATH, q[:entries, :heads].float(), k[:entries, :kv_heads].float(),
                    v[:entries, :kv_heads].float(), causal).double()
        part = got[:entries, :heads].double()
        error = ((part - want).abs() / (want.abs() + 1)).max().item()
        # torch's own call (the backend its dispatcher picks), then each
        # fused backend forced.
        contenders = {"sdpa": lambda: F.scaled_dot_product_attention(
                          q, k, v, is_causal=causal, enable_gqa=True),
                      "flash": lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal),
                      "cudnn": lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)}
        if b * hq * sq * skv * 2 <= MAX_UNFUSED_SCORE_BYTES:
            contenders["unfused"] = lambda: unfused(q, k, v, causal)
        row = {"shape": [b, hq, hkv, sq, skv, causal], "runs": decision.runs,
               "why": repr(decision), "max_error": error, "us": {}}
        for name, fn in contenders.items():
            try:
                t_ours, t_theirs = tt.compare_us(ours, fn, got, rounds=args.rounds)
            except RuntimeError as e:  # a backend that does not take the shape
                row["us"][name] = None
                row.setdefault("errors", {})[name] = str(e).splitlines()[0]
                continue
            row["us"]["tiletune"] = t_ours
            row["us"][name] = t_theirs
        t = row["us"].get("tiletune")
        f = flops(b, hq, sq, skv, causal)
        row["tiletune_tflops"] = f / t / 1e6 if t else None
        row["ratios"] = {n: (u / t if u and t else None) for n, u in row["us"].items()
                         if n != "tiletune"}
        rows.append(row)
        fmt = lambda x, w=9: f"{x:{w}.1f}" if x else f"{'-':>{w}}"
        ratio = lambda n: f"{row['ratios'].get(n):7.3f}" if row["ratios"].get(n) else f"{'-':>7}"
        label = f"B{b} H{hq}/{hkv} S{sq} T{skv}{' causal' if causal else ''}"
        print(f"{label:34} {decision.runs:8} {fmt(t)} {fmt(row['us'].get('sdpa'))} "
              f"{fmt(row['us'].get('flash'))} {fmt(row['us'].get('cudnn'))} "
              f"{fmt(row['us'].get('unfused'))}  {fmt(row['tiletune_tflops'], 8)} "
              f"{ratio('sdpa')} {ratio('flash')} {ratio('cudnn')} "
              f"{ratio('unfused'):>9}" + ("" if error <= TOLERANCE else f"  ERROR {error:.2e}"))
    ok = all(row["max_error"] <= TOLERANCE for row in rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "tolerance": TOLERANCE, "outputs_match": ok, "rows": rows}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""tiletune.torch on a GPU against a real daemon with the CUDA backend:
served CUBINs launched on torch's current stream, inside a CUDA graph and
under torch.compile, checked against a float64 reference on odd shapes.
Skipped without CUDA."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the GPU tests of tiletune.torch run on a GPU machine",
                allow_module_level=True)

import tiletune  # noqa: E402
import tiletune.torch as tt  # noqa: E402
from tiletune.v1 import jobs_pb2  # noqa: E402

# An odd shape that tuning wins by a margin on the H200 (1.22-1.27x cuBLASLt
# with its epilogue pass; at 77x256x520 both took 15-18 us and the record
# came out VENDOR about half the time).
M, N, K = 33, 2048, 1032
ROWS, COLS = 77, 1000
BF16 = torch.bfloat16


def close(got, want, tolerance=2e-2):
    error = ((got.double() - want).abs() / (want.abs() + 1)).max().item()
    assert error < tolerance, error


@pytest.fixture(scope="module")
def runtime(daemon, tmp_path_factory):
    rt = tt.configure(daemon.unix, trusted_keys=[daemon.signing_key], guard_against_torch=False,
                      cache_dir=tmp_path_factory.mktemp("cache"), timeout=120)
    gemm = tiletune.key("gemm", {"m": M, "n": N, "k": K}, dtype="bf16",
                        chain=["bias", "silu", "residual_add"], layouts={"b": "col"})
    rmsnorm = tiletune.key("rmsnorm", {"rows": ROWS, "cols": COLS}, dtype="bf16",
                           prologue=["residual_add"])
    rmsnorm.write_prologue_output = True
    softmax = tiletune.key("softmax", {"rows": ROWS, "cols": COLS}, dtype="bf16",
                           prologue=["scale", "residual_add"])
    job = rt.client.submit_job([gemm, rmsnorm, softmax], max_variants=6,
                               strategy=jobs_pb2.STRATEGY_RANDOM, seed=2,
                               device="cuda:0")
    list(rt.client.watch_job(job))
    assert rt.client.get_job(job).state == jobs_pb2.JOB_SUCCEEDED
    return rt


def inputs(seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    r = lambda *shape: (torch.rand(shape, generator=g, device="cuda") * 2 - 1).to(BF16)
    return r(M, K), r(N, K), r(N), r(M, N)


def float64_linear(x, w, b, residual):
    return torch.nn.functional.silu(x.double() @ w.double().T + b.double()) + residual.double()


def runs(prefix):
    decision = next(d for name, d in tt.decisions().items() if name.startswith(prefix))
    return decision


def test_linear_launches_the_served_cubin_on_the_current_stream(runtime):
    x, w, b, residual = inputs(1)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = tt.linear(x, w, b, activation="silu", residual=residual)
    side.synchronize()
    decision = runs(f"gemm {M}x{N}x{K}")
    assert decision.runs == "tiletune", decision
    close(y, float64_linear(x, w, b, residual))


def test_row_ops_run_served_kernels(runtime):
    g = torch.Generator(device="cuda").manual_seed(2)
    x = (torch.randn((ROWS, COLS), generator=g, device="cuda")).to(BF16)
    residual = (torch.randn((ROWS, COLS), generator=g, device="cuda")).to(BF16)
    w = (torch.rand(COLS, generator=g, device="cuda") + 0.5).to(BF16)
    y, h = tt.rms_norm(x, w, residual=residual, eps=1e-5)
    assert runs(f"rmsnorm {ROWS}x{COLS}").runs == "tiletune", tt.decisions()
    hd = x.double() + residual.double()
    close(h, hd, 1e-2)
    close(y, hd * torch.rsqrt(hd.pow(2).mean(-1, keepdim=True) + 1e-5) * w.double())
    p = tt.softmax(x, scale=0.125, mask=residual)
    assert runs(f"softmax {ROWS}x{COLS}").runs == "tiletune", tt.decisions()
    close(p, torch.softmax(x.double() * 0.125 + residual.double(), -1), 1e-2)


def test_a_cuda_graph_replays_the_served_kernel(runtime):
    x, w, b, residual = inputs(3)
    tt.linear(x, w, b, activation="silu", residual=residual)  # resolved before capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = tt.linear(x, w, b, activation="silu", residual=residual)
    fresh = inputs(4)
    for dst, src in zip((x, w, b, residual), fresh):
        dst.copy_(src)
    y.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    close(y, float64_linear(*fresh))


@pytest.mark.skipif(not hasattr(torch, "compile") or not tt._CUSTOM_OPS,
                    reason="torch.compile and torch.library.custom_op need torch >= 2.4")
def test_torch_compile_calls_the_custom_op(runtime):
    x, w, b, residual = inputs(5)
    compiled = torch.compile(lambda x: tt.linear(x, w, b, activation="silu", residual=residual),
                             fullgraph=True)
    close(compiled(x), float64_linear(x, w, b, residual))
    assert runs(f"gemm {M}x{N}x{K}").runs == "tiletune"


def test_tensors_on_another_device_are_refused(runtime):
    x, w, b, residual = inputs(6)
    with pytest.raises(ValueError, match="weight: on cpu, expected cuda:0"):
        tt.linear(x, w.cpu())


def float64_attention(q, k, v, causal, scale):
    group = q.shape[1] // k.shape[1]
    kd = k.double().repeat_interleave(group, dim=1)
    vd = v.double().repeat_interleave(group, dim=1)
    s = q.double() @ kd.transpose(-1, -2) * scale
    if causal:
        q_len, kv_len = q.shape[2], k.shape[2]
        hidden = torch.ones(q_len, kv_len, dtype=torch.bool, device=q.device).tril(
            kv_len - q_len).logical_not()
        s = s.masked_fill(hidden, float("-inf"))
    return torch.softmax(s, -1) @ vd


def test_attention_runs_the_served_flash_kernel(runtime):
    # Grouped-query, causal with more keys than queries (chunked prefill:
    # bottom-right aligned), lengths no block divides.
    batch, q_heads, kv_heads, q_len, kv_len, head_dim = 2, 8, 2, 77, 131, 128
    key = tt._attention_key(batch, q_heads, kv_heads, q_len, kv_len, head_dim, BF16, True)
    job = runtime.client.submit_job([key], max_variants=4, strategy=jobs_pb2.STRATEGY_RANDOM,
                                    seed=3, device="cuda:0")
    list(runtime.client.watch_job(job))
    assert runtime.client.get_job(job).state == jobs_pb2.JOB_SUCCEEDED
    g = torch.Generator(device="cuda").manual_seed(7)
    r = lambda *shape: (torch.rand(shape, generator=g, device="cuda") * 2 - 1).to(BF16)
    q, k, v = r(batch, q_heads, q_len, head_dim), r(batch, kv_heads, kv_len, head_dim), \
        r(batch, kv_heads, kv_len, head_dim)
    o = tt.attention(q, k, v, causal=True)
    assert runs("attention").runs == "tiletune", tt.decisions()
    close(o, float64_attention(q, k, v, True, head_dim ** -0.5))

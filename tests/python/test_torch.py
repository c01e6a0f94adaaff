"""tiletune.torch against a real daemon on the host backend, on torch CPU
tensors: ops run the served host kernels where tuning won, torch's own op on
a VENDOR record, a miss or with the daemon down, and refuse tensors they
cannot take. (test_torch_cuda.py runs the same ops on a GPU.)"""

import pytest

torch = pytest.importorskip("torch")

import tiletune  # noqa: E402
import tiletune.torch as tt  # noqa: E402
from tiletune.v1 import jobs_pb2, records_pb2  # noqa: E402

# Against the host's vectorised straightforward kernel on one CPU a tuned
# rmsnorm wins by a few percent or loses: the record decides which runs.
ROWS, COLS = 75, 1000
# A decode linear (gemm m=1, weights [n][k]): tuning wins it against
# host-naive (the tests' baseline), and the seed tries its winner
# (host_gemm_rowwise) first, as
# kDecodeGemmSeed in tests/support/tiletuned_process.h (held to it by
# tests/tuner/search_strategy_test.cpp).
X_SHAPE, N = (1, 1, 512), 512
DECODE_GEMM_SEED = 21
SWIGLU_ROWS = 3  # odd


def float64_linear(x, w, b, residual):
    return torch.relu(x.double() @ w.double().T + b.double()) + residual.double()


def float64_add_rms_norm(x, residual, w, eps):
    h = x.double() + residual.double()
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * w.double(), h


def rms_norm_key():
    key = tiletune.key("rmsnorm", {"rows": ROWS, "cols": COLS}, prologue=["residual_add"])
    key.write_prologue_output = True
    return key


def swiglu_key():
    return tiletune.key("gemm", {"m": SWIGLU_ROWS, "n": N, "k": X_SHAPE[2]}, layouts={"b": "col"},
                        gate="swiglu")


def tune(client, keys):
    """Tunes `keys`; a decode gemm must be the first (the seed's item 0)."""
    job = client.submit_job(keys, max_variants=4, strategy=jobs_pb2.STRATEGY_RANDOM,
                            seed=DECODE_GEMM_SEED)
    events = list(client.watch_job(job))
    assert events[-1].kind == jobs_pb2.JobEvent.KIND_JOB_FINISHED
    assert client.get_job(job).state == jobs_pb2.JOB_SUCCEEDED


@pytest.fixture(scope="module")
def runtime(daemon, tmp_path_factory):
    rt = tt.configure(daemon.unix, trusted_keys=[daemon.signing_key], allow_host_code=True,
                      guard_against_torch=False, cache_dir=tmp_path_factory.mktemp("cache"),
                      timeout=60)
    m = X_SHAPE[0] * X_SHAPE[1]
    gemm = tiletune.key("gemm", {"m": m, "n": N, "k": X_SHAPE[2]},
                        chain=["bias", "relu", "residual_add"], layouts={"b": "col"})
    tune(rt.client, [gemm, rms_norm_key(), swiglu_key()])
    return rt


def test_linear_runs_the_served_kernel_once_tuned(runtime):
    g = torch.Generator().manual_seed(5)
    x = torch.rand(X_SHAPE, generator=g) * 2 - 1
    w = torch.rand((N, X_SHAPE[2]), generator=g) * 2 - 1
    b = torch.rand(N, generator=g) * 2 - 1
    residual = torch.rand(X_SHAPE[:-1] + (N,), generator=g) * 2 - 1
    y = tt.linear(x, w, b, activation="relu", residual=residual)
    decision = next(d for name, d in tt.decisions().items() if name.startswith(f"gemm 1x{N}"))
    assert decision.runs == "tiletune", decision
    assert y.shape == X_SHAPE[:-1] + (N,)
    want = float64_linear(x, w, b, residual)
    assert ((y.double() - want).abs() / (want.abs() + 1)).max() < 1e-4


def test_swiglu_gates_the_gate_projection_with_the_up_projection(runtime):
    g = torch.Generator().manual_seed(7)
    x = torch.rand((SWIGLU_ROWS, X_SHAPE[2]), generator=g) * 2 - 1
    merged = torch.rand((2 * N, X_SHAPE[2]), generator=g) * 2 - 1  # [gate; up], as vLLM keeps it
    y = tt.swiglu(x, merged[:N], merged[N:])
    decision = tt.decisions()[f"gemm {SWIGLU_ROWS}x{N}x{X_SHAPE[2]} torch.float32 swiglu cpu"]
    tuned = runtime.client.lookup(swiglu_key()).record.winner == records_pb2.WINNER_TUNED
    assert decision.runs == ("tiletune" if tuned else "torch"), decision
    xd, md = x.double(), merged.double()
    want = torch.nn.functional.silu(xd @ md[:N].T) * (xd @ md[N:].T)
    assert ((y.double() - want).abs() / (want.abs() + 1)).max() < 1e-4
    with pytest.raises(ValueError, match="two \\[out, in\\] weights of one shape"):
        tt.swiglu(x, merged[:N], merged[:N - 1])


def test_rms_norm_with_a_residual_returns_the_residual_stream(runtime):
    g = torch.Generator().manual_seed(6)
    x = torch.rand((ROWS, COLS), generator=g) * 4 - 2
    residual = torch.rand((ROWS, COLS), generator=g) * 4 - 2
    w = torch.rand(COLS, generator=g) + 0.5
    y, h = tt.rms_norm(x, w, residual=residual, eps=1e-5)
    decision = tt.decisions()[f"rmsnorm {ROWS}x{COLS} torch.float32 residual_add cpu"]
    tuned = runtime.client.lookup(rms_norm_key()).record.winner == records_pb2.WINNER_TUNED
    assert decision.runs == ("tiletune" if tuned else "torch"), decision
    want_y, want_h = float64_add_rms_norm(x, residual, w, 1e-5)
    assert (h.double() - want_h).abs().max() < 1e-6
    assert ((y.double() - want_y).abs() / (want_y.abs() + 1)).max() < 1e-4


def test_the_guard_times_the_kernel_against_torch_and_keeps_the_faster(daemon, runtime):
    guarded = tt.configure(daemon.unix, trusted_keys=[daemon.signing_key], allow_host_code=True,
                           cache_dir=runtime.client.cache_dir, timeout=60, guard_rounds=3)
    try:
        x = torch.rand(X_SHAPE) - 0.5
        w = torch.rand((N, X_SHAPE[2])) - 0.5
        b, residual = torch.rand(N), torch.rand(X_SHAPE[:-1] + (N,))
        y = tt.linear(x, w, b, activation="relu", residual=residual)
        (decision,) = guarded.decisions().values()
        assert decision.tiletune_us > 0 and decision.torch_us > 0, decision
        faster = decision.tiletune_us < decision.torch_us
        assert decision.runs == ("tiletune" if faster else "torch"), decision
        want = float64_linear(x, w, b, residual)
        assert ((y.double() - want).abs() / (want.abs() + 1)).max() < 1e-4
    finally:
        tt._runtime = runtime


def test_a_miss_runs_torch_and_queues_tuning(runtime):
    x, w = torch.rand((3, 40)), torch.rand((24, 40))
    y = tt.linear(x, w)
    assert torch.allclose(y, x @ w.T)
    decision = tt.decisions()["gemm 3x24x40 torch.float32  cpu"]
    assert decision.runs == "torch" and decision.reason.startswith("miss (tuning job"), decision


def test_the_daemon_down_runs_torch(runtime, tmp_path):
    down = tt.configure("127.0.0.1:1", timeout=0.5, cache_dir=tmp_path)
    try:
        x, w = torch.rand((4, 8)), torch.rand((8, 8))
        assert torch.allclose(tt.linear(x, w), x @ w.T)
        (decision,) = down.decisions().values()
        assert decision.runs == "torch" and "UNAVAILABLE" in decision.reason, decision
    finally:
        tt._runtime = runtime


def test_tensors_the_ops_cannot_take_are_refused_by_name(runtime):
    x, w = torch.rand((4, 8)), torch.rand((6, 8))
    with pytest.raises(ValueError, match="x: not contiguous"):
        tt.linear(torch.rand((8, 4)).T, w)
    with pytest.raises(TypeError, match="weight: dtype torch.float64, expected torch.float32"):
        tt.linear(x, w.double())
    with pytest.raises(ValueError, match="weight: last dimension 7, expected 8"):
        tt.linear(x, torch.rand((6, 7)))
    with pytest.raises(TypeError, match="x: dtype torch.int64"):
        tt.rms_norm(torch.ones((2, 8), dtype=torch.int64), torch.ones(8))
    with pytest.raises(ValueError, match="residual: shape"):
        tt.rms_norm(x, torch.ones(8), residual=torch.rand((2, 8)))
    with pytest.raises(ValueError, match="activation: 'tanh'"):
        tt.linear(x, w, activation="tanh")


def test_attention_runs_the_served_host_kernel(runtime):
    # f32 on the host: grouped-query, causal, bottom-right aligned.
    batch, q_heads, kv_heads, q_len, kv_len, head_dim = 1, 4, 2, 9, 21, 64
    key = tt._attention_key(batch, q_heads, kv_heads, q_len, kv_len, head_dim, torch.float32,
                            True)
    tune(runtime.client, [key])
    g = torch.Generator().manual_seed(9)
    q = torch.rand((batch, q_heads, q_len, head_dim), generator=g) * 2 - 1
    k = torch.rand((batch, kv_heads, kv_len, head_dim), generator=g) * 2 - 1
    v = torch.rand((batch, kv_heads, kv_len, head_dim), generator=g) * 2 - 1
    o = tt.attention(q, k, v, causal=True, scale=0.2)
    decision = next(d for name, d in tt.decisions().items() if name.startswith("attention"))
    if decision.runs == "torch":
        assert "VENDOR" in decision.reason, decision  # the record decides which runs
    group = q_heads // kv_heads
    s = q.double() @ k.double().repeat_interleave(group, 1).transpose(-1, -2) * 0.2
    hidden = torch.ones(q_len, kv_len, dtype=torch.bool).tril(kv_len - q_len).logical_not()
    want = torch.softmax(s.masked_fill(hidden, float("-inf")), -1) @ \
        v.double().repeat_interleave(group, 1)
    assert ((o.double() - want).abs() / (want.abs() + 1)).max() < 1e-4

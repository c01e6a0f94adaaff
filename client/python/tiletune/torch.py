"""PyTorch ops that run the kernels tiletuned serves, and torch's own op
whenever there is none to run (a miss, a VENDOR record, the daemon down, a
kernel refused or slower than torch on the caller's tensors):

    import tiletune.torch as tt
    tt.configure("unix:/run/tiletune.sock", trusted_keys=[DAEMON_KEY])
    y = tt.linear(x, weight, bias, activation="gelu_tanh", residual=h)
    g = tt.swiglu(x, w_gate, w_up)  # silu(x @ w_gate.T) * (x @ w_up.T)

Each op asks the daemon once per shape (a miss queues a tuning job and is
asked again after `retry_seconds`), loads the served CUBIN into torch's
context and launches it on torch's current stream; on CPU tensors it runs
served host kernels. With torch >= 2.4 the ops are registered as
`torch.ops.tiletune.*` custom ops, so they work under torch.compile and in
CUDA graphs (nothing is asked or loaded while a graph is being captured).
`decisions()` says, per kernel key, what runs and why.
"""

import os
import statistics
import threading
import time

import torch
import torch.nn.functional as F

import tiletune
from tiletune.client import DaemonError
from tiletune.v1 import kernel_key_pb2, records_pb2, tiletune_pb2

_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
ACTIVATIONS = ("relu", "gelu_tanh", "gelu_erf", "silu")
_TORCH_ACTIVATIONS = {"relu": F.relu, "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"),
                      "gelu_erf": F.gelu, "silu": F.silu}


class Decision:
    """What runs for one kernel key on one device: "tiletune" or "torch", why,
    and the times the torch guard measured (µs; None when not measured)."""

    def __init__(self, runs, reason, tiletune_us=None, torch_us=None):
        self.runs, self.reason = runs, reason
        self.tiletune_us, self.torch_us = tiletune_us, torch_us

    def __repr__(self):
        times = ""
        if self.tiletune_us is not None:
            times = f" (tiletune {self.tiletune_us:.1f} us, torch {self.torch_us:.1f} us)"
        return f"{self.runs}: {self.reason}{times}"


class _Entry:
    __slots__ = ("kernel", "decision", "retry_at", "guarded", "name")

    def __init__(self, kernel, decision, retry_at):
        self.kernel, self.decision, self.retry_at = kernel, decision, retry_at
        self.guarded, self.name = False, ""


class Runtime:
    """The daemon the ops ask and what they learned, shared by every op in
    the process. `guard_against_torch`: before a served kernel is first
    used it runs beside torch's op on the caller's tensors; it is used only
    when its output matches and it is faster by `min_speedup` (beyond the
    noise of such a measurement), so that it never loses to torch.
    `prepared_launches`: the packed arguments each CUDA kernel keeps per
    argument list (Kernel.cuda; None: the launcher's default)."""

    def __init__(self, address, trusted_keys=None, tune_on_miss=True, retry_seconds=5.0,
                 guard_against_torch=True, min_speedup=1.02, allow_host_code=False,
                 cache_dir=None, timeout=10.0, tls_ca=None, guard_rounds=7,
                 prepared_launches=None):
        self.client = tiletune.Client(address, timeout=timeout, cache_dir=cache_dir,
                                      trusted_keys=trusted_keys, tls_ca=tls_ca)
        self.tune_on_miss = tune_on_miss
        self.retry_seconds = retry_seconds
        self.guard_against_torch = guard_against_torch
        self.min_speedup = min_speedup
        self.allow_host_code = allow_host_code
        self.guard_rounds = guard_rounds
        self.prepared_launches = prepared_launches
        self._entries = {}
        self._lock = threading.Lock()

    def decisions(self):
        """{"gemm 16x4096x4096 torch.bfloat16 residual_add cuda:0": Decision}
        for every kernel asked for so far."""
        return {e.name: e.decision for e in self._entries.values()}

    def entry(self, name, kernel_key, device):
        """What runs for `kernel_key()` on the torch `device`, found by
        `name` (a tuple; its words name it in decisions()); asks the
        daemon at most once per retry_seconds, never while capturing."""
        entry = self._entries.get(name)
        if entry is not None and (entry.retry_at is None or time.monotonic() < entry.retry_at):
            return entry
        if device.type == "cuda" and _capturing():
            return entry or _Entry(None, Decision("torch", "first seen while a CUDA graph "
                                                  "was being captured"), 0.0)
        with self._lock:
            entry = self._resolve(kernel_key(), device)
            entry.name = " ".join(str(word) for word in name)
            self._entries[name] = entry
        return entry

    def _resolve(self, kernel_key, device):
        retry_at = time.monotonic() + self.retry_seconds
        daemon_device = f"{device.type}:{device.index or 0}"
        try:
            answer = self.client.lookup(kernel_key, tune_on_miss=self.tune_on_miss,
                                        device=daemon_device)
            if answer.HasField("record") and answer.record.winner == records_pb2.WINNER_VENDOR:
                return _Entry(None, Decision("torch", "VENDOR record: the daemon's kernels lose "
                                             "to " + answer.record.baseline_name), None)
            if answer.result != tiletune_pb2.LookupResponse.RESULT_HIT:
                queued = f" (tuning job {answer.job_id})" if answer.job_id else ""
                return _Entry(None, Decision("torch", "miss" + queued), retry_at)
            kernel = self.client.get_kernel(kernel_key, device=daemon_device)
        except DaemonError as e:
            return _Entry(None, Decision("torch", f"daemon: {e}"), retry_at)
        if kernel is None:
            return _Entry(None, Decision("torch", self.client.last_fallback.reason), retry_at)
        try:
            if device.type == "cuda":
                with torch.cuda.device(device):
                    loaded = kernel.cuda(f"cuda:{device.index or 0}",
                                         prepared_launches=self.prepared_launches)
            else:
                loaded = kernel.host(self.client.kernel_path(kernel).with_suffix(".so"),
                                     allow_unsigned=False) if self.allow_host_code else None
        except (tiletune.RefusedKernel, tiletune.LaunchError, OSError, RuntimeError) as e:
            return _Entry(None, Decision("torch", f"not loaded: {e}"), None)
        if loaded is None:
            return _Entry(None, Decision("torch", "a host kernel; allow_host_code is off"), None)
        return _Entry(loaded, Decision("tiletune", "tuned record"), None)

    def run(self, entry, launch, reference):
        """Runs `launch(kernel)` (returning the op's outputs) when the entry
        has a kernel that passed the guard, `reference()` (torch) otherwise."""
        if entry.kernel is None:
            return reference()
        if not entry.guarded:
            entry.guarded = True
            if self.guard_against_torch and not _capturing():
                self._guard(entry, launch, reference)
                if entry.kernel is None:
                    return reference()
        return launch(entry.kernel)

    def _guard(self, entry, launch, reference):
        want, got = reference(), launch(entry.kernel)
        for w, g in zip(_as_tuple(want), _as_tuple(got)):
            tolerance = 1e-4 if w.dtype == torch.float32 else 2e-2
            error = ((g.double() - w.double()).abs() / (w.double().abs() + 1)).max().item()
            if not error <= tolerance:
                entry.kernel = None
                entry.decision = Decision("torch", f"output differs from torch's by {error:.2e} "
                                          f"(tolerance {tolerance:g})")
                return
        ours, theirs = compare_us(lambda: launch(entry.kernel), reference, want,
                                  self.guard_rounds)
        if ours * self.min_speedup <= theirs:
            entry.decision.tiletune_us, entry.decision.torch_us = ours, theirs
            return
        entry.kernel = None
        entry.decision = Decision("torch", "the served kernel is not faster than torch here",
                                  ours, theirs)


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def _capturing():
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def time_us(fn, like, batches=7, calls=20):
    """Median µs per call of `fn` over `batches` batches of `calls` calls.
    On CUDA the GPU is held by a sleep kernel while the batch is queued, so
    what is timed (CUDA events) is the kernels back to back, not this
    process's launch overhead; on CPU the wall clock."""
    cuda = _as_tuple(like)[0].is_cuda
    fn()
    times = []
    for _ in range(batches):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(200_000 * calls)
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / calls)
        else:
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            times.append((time.perf_counter() - t0) * 1e6 / calls)
    return statistics.median(times)


def compare_us(ours, theirs, like, rounds=7):
    """(µs of `ours`, µs of `theirs`): medians over `rounds` rounds that
    time one batch of each in turn (time_us), so that clock and power drift
    fall on both alike."""
    a, b = [], []
    for _ in range(rounds):
        a.append(time_us(ours, like, batches=1))
        b.append(time_us(theirs, like, batches=1))
    return statistics.median(a), statistics.median(b)


_runtime = None


def configure(address=None, **options):
    """Points the ops at a daemon (host:port or unix:/path; default
    $TILETUNE_SERVER, else unix:/run/tiletune/tiletuned.sock), with
    Runtime's options; trusted_keys defaults to the comma-separated
    $TILETUNE_TRUSTED_KEYS. Returns the Runtime."""
    global _runtime
    address = address or os.environ.get("TILETUNE_SERVER", "unix:/run/tiletune/tiletuned.sock")
    if "trusted_keys" not in options and os.environ.get("TILETUNE_TRUSTED_KEYS"):
        options["trusted_keys"] = os.environ["TILETUNE_TRUSTED_KEYS"].split(",")
    _runtime = Runtime(address, **options)
    return _runtime


def runtime():
    return _runtime or configure()


def decisions():
    return runtime().decisions()


def _check(name, t, dtype=None, device=None, last=None):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: a torch.Tensor is needed, not {type(t).__name__}")
    if dtype is not None and t.dtype != dtype:
        raise TypeError(f"{name}: dtype {t.dtype}, expected {dtype} (that of x)")
    if t.dtype not in _DTYPES:
        raise TypeError(f"{name}: dtype {t.dtype}; tiletune ops take float32, float16 or bfloat16")
    if device is not None and t.device != device:
        raise ValueError(f"{name}: on {t.device}, expected {device} (that of x)")
    if last is not None and t.shape[-1] != last:
        raise ValueError(f"{name}: last dimension {t.shape[-1]}, expected {last}")
    if not t.is_contiguous():
        raise ValueError(f"{name}: not contiguous; call .contiguous() first")


def _launch_bound(kernel, x, fields, tensors, floats=(), values=()):
    """Launches `kernel` with the addresses of `tensors` for `fields` (then
    the chain's tensors), checked by the op already; CUDA kernels on torch's
    current stream of x's device."""
    launch = kernel.bind(fields, floats)
    addresses = [t.data_ptr() for t in tensors]
    if x.is_cuda:
        launch(_current_stream(x.device.index), addresses, values)
    else:
        launch(addresses, values)


if hasattr(torch._C, "_cuda_getCurrentRawStream"):
    _current_stream = torch._C._cuda_getCurrentRawStream
else:
    def _current_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _rows(x):
    rows = 1
    for size in x.shape[:-1]:
        rows *= size
    return rows


def _linear_impl(x, weight, bias, activation, residual):
    _check("x", x)
    _check("weight", weight, x.dtype, x.device, x.shape[-1])
    if weight.dim() != 2:
        raise ValueError(f"weight: {weight.dim()} dimensions; a linear weight is [out, in]")
    n = weight.shape[0]
    if bias is not None:
        _check("bias", bias, x.dtype, x.device, n)
    if activation and activation not in ACTIVATIONS:
        raise ValueError(f"activation: '{activation}'; one of {', '.join(ACTIVATIONS)} or None")
    out_shape = x.shape[:-1] + (n,)
    if residual is not None:
        _check("residual", residual, x.dtype, x.device, n)
        if residual.shape != out_shape:
            raise ValueError(f"residual: shape {tuple(residual.shape)}, expected "
                             f"{tuple(out_shape)}")

    def reference():
        y = F.linear(x, weight, bias)
        if activation:
            y = _TORCH_ACTIVATIONS[activation](y)
        return y + residual if residual is not None else y

    m, k = _rows(x), x.shape[-1]
    chain = (["bias"] if bias is not None else []) + ([activation] if activation else []) + \
        (["residual_add"] if residual is not None else [])
    if m == 0:
        return reference()
    rt = runtime()
    entry = rt.entry(("gemm", f"{m}x{n}x{k}", x.dtype, ",".join(chain), x.device),
                     lambda: tiletune.key("gemm", {"m": m, "n": n, "k": k},
                                          dtype=_DTYPES[x.dtype], chain=chain,
                                          layouts={"b": "col"}), x.device)

    def launch(kernel):
        y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        _launch_bound(kernel, x, ("a", "b", "c"),
                      [t for t in (x, weight, y, bias, residual) if t is not None])
        return y

    return rt.run(entry, launch, reference)


def _swiglu_impl(x, gate_weight, up_weight):
    _check("x", x)
    _check("gate_weight", gate_weight, x.dtype, x.device, x.shape[-1])
    _check("up_weight", up_weight, x.dtype, x.device, x.shape[-1])
    if gate_weight.dim() != 2 or gate_weight.shape != up_weight.shape:
        raise ValueError(f"gate_weight {tuple(gate_weight.shape)} and up_weight "
                         f"{tuple(up_weight.shape)}: two [out, in] weights of one shape")
    n = gate_weight.shape[0]

    def reference():
        return F.silu(F.linear(x, gate_weight)) * F.linear(x, up_weight)

    m, k = _rows(x), x.shape[-1]
    if m == 0:
        return reference()
    rt = runtime()
    entry = rt.entry(("gemm", f"{m}x{n}x{k}", x.dtype, "swiglu", x.device),
                     lambda: tiletune.key("gemm", {"m": m, "n": n, "k": k},
                                          dtype=_DTYPES[x.dtype], layouts={"b": "col"},
                                          gate="swiglu"), x.device)

    def launch(kernel):
        y = torch.empty(x.shape[:-1] + (n,), dtype=x.dtype, device=x.device)
        _launch_bound(kernel, x, ("a", "b", "b_up", "c"), [x, gate_weight, up_weight, y])
        return y

    return rt.run(entry, launch, reference)


def _row_op_impl(op, x, weight, shift, residual, eps, scale=None, mask=None):
    """rmsnorm, layernorm and softmax over x's last dimension; with a
    residual, also the sum x + residual the norm reads (the residual
    stream)."""
    _check("x", x)
    cols = x.shape[-1]
    for name, t in (("weight", weight), ("bias", shift)):
        if t is not None:
            _check(name, t, x.dtype, x.device, cols)
            if t.dim() != 1:
                raise ValueError(f"{name}: {t.dim()} dimensions; expected [{cols}]")
    for name, t in (("residual", residual), ("mask", mask)):
        if t is not None:
            _check(name, t, x.dtype, x.device, cols)
            if t.shape != x.shape:
                raise ValueError(f"{name}: shape {tuple(t.shape)}, expected {tuple(x.shape)}")
    rows = _rows(x)
    prologue = (["scale"] if scale is not None else []) + \
        (["residual_add"] if residual is not None or mask is not None else [])

    def reference():
        h = x * scale if scale is not None else x
        h = h + residual if residual is not None else h
        h = h + mask if mask is not None else h
        if op == "softmax":
            return torch.softmax(h, dim=-1)
        if op == "layernorm":
            y = F.layer_norm(h, (cols,), weight, shift, eps)
        elif hasattr(F, "rms_norm"):  # torch >= 2.4: its fused kernel
            y = F.rms_norm(h, (cols,), weight, eps)
        else:
            hf = h.float()
            y = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()).to(
                x.dtype)
        return (y, h) if residual is not None else y

    rt = runtime()
    entry = rt.entry((op, f"{rows}x{cols}", x.dtype, ",".join(prologue), x.device),
                     lambda: _row_key(op, rows, cols, x.dtype, prologue, residual is not None),
                     x.device)

    def launch(kernel):
        y = torch.empty_like(x)
        h = torch.empty_like(x) if residual is not None else None
        fields = [("x", x), ("y", y), ("w", weight), ("b", shift), ("prologue_out", h)]
        fields = [(name, t) for name, t in fields if t is not None]
        chain = [t for t in (residual, mask) if t is not None]
        if scale is not None:  # a chain scalar: packed field by field
            kernel.launch(*([_current_stream(x.device.index)] if x.is_cuda else []),
                          chain=chain, scalars=[scale], **dict(fields))
        else:
            floats = ("eps",) if op != "softmax" else ()
            _launch_bound(kernel, x, [name for name, _ in fields],
                          [t for _, t in fields] + chain, floats, (eps,) if floats else ())
        return (y, h) if residual is not None else y

    return rt.run(entry, launch, reference)


# torch 2.5 and later read grouped K and V heads in place (enable_gqa);
# before, each KV head is repeated for its query heads, a copy the size of
# the whole cache per group member (on an H100, 16 decode sequences over a
# 2048-token cache with 32/8 heads: 757 us against SDPA's 49 us).
_SDPA_TAKES_GQA = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)


def _bottom_right_causal(q_len, kv_len, device):
    """The mask torch's SDPA needs for tiletune's causal: query i sees key j
    when j <= i + kv_len - q_len (torch's is_causal aligns to the top left,
    which differs when q_len != kv_len)."""
    return torch.ones(q_len, kv_len, dtype=torch.bool, device=device).tril(kv_len - q_len)


def _attention_impl(q, k, v, causal, scale):
    """q [B, Hq, S, D], k and v [B, Hkv, T, D] (torch SDPA's layout, BHSD),
    Hq a multiple of Hkv; o like q."""
    _check("q", q)
    if q.dim() != 4:
        raise ValueError(f"q: {q.dim()} dimensions; attention takes [batch, heads, seq, head_dim]")
    batch, q_heads, q_len, head_dim = q.shape
    if head_dim not in (64, 128, 256):
        raise ValueError(f"q: head_dim {head_dim}; tiletune attention takes 64, 128 or 256")
    _check("k", k, q.dtype, q.device, head_dim)
    _check("v", v, q.dtype, q.device, head_dim)
    if k.dim() != 4 or k.shape[0] != batch or k.shape != v.shape:
        raise ValueError(f"k, v: shapes {tuple(k.shape)}, {tuple(v.shape)}; expected both "
                         f"[{batch}, kv_heads, kv_len, {head_dim}]")
    kv_heads, kv_len = k.shape[1], k.shape[2]
    if q_heads % kv_heads:
        raise ValueError(f"q: {q_heads} heads is not a multiple of k's {kv_heads}")
    scale = head_dim ** -0.5 if scale is None else float(scale)

    def reference():
        kk, vv, gqa = k, v, {}
        if kv_heads != q_heads:
            if _SDPA_TAKES_GQA:
                gqa = {"enable_gqa": True}
            else:  # copies K and V once per query head of a group
                kk = k.repeat_interleave(q_heads // kv_heads, dim=1)
                vv = v.repeat_interleave(q_heads // kv_heads, dim=1)
        if causal and q_len != kv_len:
            return F.scaled_dot_product_attention(
                q, kk, vv, attn_mask=_bottom_right_causal(q_len, kv_len, q.device), scale=scale,
                **gqa)
        return F.scaled_dot_product_attention(q, kk, vv, is_causal=causal, scale=scale, **gqa)

    if batch * q_heads * q_len == 0 or kv_len == 0:
        return reference()
    rt = runtime()
    shape = f"{batch}x{q_heads}/{kv_heads}x{q_len}x{kv_len}x{head_dim}"
    entry = rt.entry(("attention", shape, q.dtype, "causal" if causal else "", q.device),
                     lambda: _attention_key(batch, q_heads, kv_heads, q_len, kv_len, head_dim,
                                            q.dtype, causal), q.device)

    def launch(kernel):
        o = torch.empty_like(q)
        _launch_bound(kernel, q, ("q", "k", "v", "o"), (q, k, v, o), ("scale",), (scale,))
        return o

    return rt.run(entry, launch, reference)


def _attention_key(batch, q_heads, kv_heads, q_len, kv_len, head_dim, dtype, causal):
    k = tiletune.key("attention", {"batch": batch, "q_heads": q_heads, "kv_heads": kv_heads,
                                   "q_len": q_len, "kv_len": kv_len, "head_dim": head_dim},
                     dtype=_DTYPES[dtype])
    k.sequence_layout = kernel_key_pb2.SEQUENCE_LAYOUT_BHSD
    if causal:
        k.attention_mask = kernel_key_pb2.ATTENTION_MASK_CAUSAL
    return k


def _row_key(op, rows, cols, dtype, prologue, write_prologue_output):
    k = tiletune.key(op, {"rows": rows, "cols": cols}, dtype=_DTYPES[dtype], prologue=prologue)
    k.write_prologue_output = write_prologue_output
    return k


# torch.library custom ops (torch >= 2.4): opaque to torch.compile, their
# fake implementations give the output shapes.
_CUSTOM_OPS = hasattr(torch, "library") and hasattr(torch.library, "custom_op")
if _CUSTOM_OPS:
    from typing import Optional, Tuple

    @torch.library.custom_op("tiletune::linear", mutates_args=())
    def _linear_op(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                   activation: str, residual: Optional[torch.Tensor]) -> torch.Tensor:
        return _linear_impl(x, weight, bias, activation or None, residual)

    @_linear_op.register_fake
    def _(x, weight, bias, activation, residual):
        return x.new_empty(x.shape[:-1] + (weight.shape[0],))

    @torch.library.custom_op("tiletune::swiglu", mutates_args=())
    def _swiglu_op(x: torch.Tensor, gate_weight: torch.Tensor,
                   up_weight: torch.Tensor) -> torch.Tensor:
        return _swiglu_impl(x, gate_weight, up_weight)

    @_swiglu_op.register_fake
    def _(x, gate_weight, up_weight):
        return x.new_empty(x.shape[:-1] + (gate_weight.shape[0],))

    @torch.library.custom_op("tiletune::rms_norm", mutates_args=())
    def _rms_norm_op(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        return _row_op_impl("rmsnorm", x, weight, None, None, eps)

    @_rms_norm_op.register_fake
    def _(x, weight, eps):
        return torch.empty_like(x)

    @torch.library.custom_op("tiletune::add_rms_norm", mutates_args=())
    def _add_rms_norm_op(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                         eps: float) -> Tuple[torch.Tensor, torch.Tensor]:
        return _row_op_impl("rmsnorm", x, weight, None, residual, eps)

    @_add_rms_norm_op.register_fake
    def _(x, residual, weight, eps):
        return torch.empty_like(x), torch.empty_like(x)

    @torch.library.custom_op("tiletune::layer_norm", mutates_args=())
    def _layer_norm_op(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                       eps: float) -> torch.Tensor:
        return _row_op_impl("layernorm", x, weight, bias, None, eps)

    @_layer_norm_op.register_fake
    def _(x, weight, bias, eps):
        return torch.empty_like(x)

    @torch.library.custom_op("tiletune::softmax", mutates_args=())
    def _softmax_op(x: torch.Tensor, scale: Optional[float],
                    mask: Optional[torch.Tensor]) -> torch.Tensor:
        return _row_op_impl("softmax", x, None, None, None, 0.0, scale, mask)

    @_softmax_op.register_fake
    def _(x, scale, mask):
        return torch.empty_like(x)

    @torch.library.custom_op("tiletune::attention", mutates_args=())
    def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                      scale: Optional[float]) -> torch.Tensor:
        return _attention_impl(q, k, v, causal, scale)

    @_attention_op.register_fake
    def _(q, k, v, causal, scale):
        return torch.empty_like(q)


def _compiling():
    """Whether torch.compile is tracing the caller: then the ops appear as
    the custom ops; run eagerly they skip the dispatcher's Python overhead."""
    return _CUSTOM_OPS and torch.compiler.is_compiling()


def linear(x, weight, bias=None, activation=None, residual=None):
    """activation(x @ weight.T + bias) + residual, as F.linear: x [..., in],
    weight [out, in]; activation one of ACTIVATIONS or None."""
    if _compiling():
        return torch.ops.tiletune.linear(x, weight, bias, activation or "", residual)
    return _linear_impl(x, weight, bias, activation, residual)


def swiglu(x, gate_weight, up_weight):
    """silu(x @ gate_weight.T) * (x @ up_weight.T) in one kernel that reads x
    once: the gate/up projection of a gated MLP (LLaMA's). Both weights
    [out, in]; halves of a merged [2 out, in] weight (w[:out], w[out:]) do."""
    if _compiling():
        return torch.ops.tiletune.swiglu(x, gate_weight, up_weight)
    return _swiglu_impl(x, gate_weight, up_weight)


def rms_norm(x, weight, residual=None, eps=1e-5):
    """RMSNorm over the last dimension; with `residual`, of x + residual,
    returning (normed, x + residual)."""
    if residual is not None:
        if _compiling():
            return torch.ops.tiletune.add_rms_norm(x, residual, weight, eps)
        return _row_op_impl("rmsnorm", x, weight, None, residual, eps)
    if _compiling():
        return torch.ops.tiletune.rms_norm(x, weight, eps)
    return _row_op_impl("rmsnorm", x, weight, None, None, eps)


def layer_norm(x, weight, bias, eps=1e-5):
    """LayerNorm over the last dimension with an affine weight and bias."""
    if _compiling():
        return torch.ops.tiletune.layer_norm(x, weight, bias, eps)
    return _row_op_impl("layernorm", x, weight, bias, None, eps)


def softmax(x, scale=None, mask=None):
    """softmax(x * scale + mask) over the last dimension; mask is additive,
    shaped like x."""
    if _compiling():
        return torch.ops.tiletune.softmax(x, scale, mask)
    return _row_op_impl("softmax", x, None, None, None, 0.0, scale, mask)


def attention(q, k, v, causal=False, scale=None):
    """softmax(q kᵀ * scale [+ causal mask]) v per batch entry and head, as
    torch's scaled_dot_product_attention: q [B, Hq, S, D], k and v
    [B, Hkv, T, D] with Hq a multiple of Hkv (grouped-query attention), D 64,
    128 or 256; scale defaults to 1/sqrt(D). causal hides key j from query i
    when j > i + T - S (aligned to the bottom right, as decode and chunked
    prefill need; the same as is_causal when S == T)."""
    if _compiling():
        return torch.ops.tiletune.attention(q, k, v, causal, scale)
    return _attention_impl(q, k, v, causal, scale)

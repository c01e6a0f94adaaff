"""The Python package against a real daemon on the host backend: a key tuned
through it, its kernel fetched, checked by content hash, cached on disk and
run from Python on numpy arrays; and the errors a caller gets."""

import grpc
import numpy as np
import pytest

import tiletune
from tiletune.host_launcher import LaunchError
from tiletune.v1 import jobs_pb2, records_pb2, tiletune_pb2

M, N, K = 160, 144, 128


@pytest.fixture(scope="module")
def tuned(daemon, tmp_path_factory):
    client = tiletune.Client(daemon, timeout=60, cache_dir=tmp_path_factory.mktemp("cache"))
    gemm = tiletune.key("gemm", {"m": M, "n": N, "k": K}, chain=["bias", "relu"])
    job = client.submit_job([gemm], max_variants=5, strategy=jobs_pb2.STRATEGY_RANDOM, seed=11)
    events = list(client.watch_job(job))
    assert events[-1].kind == jobs_pb2.JobEvent.KIND_JOB_FINISHED
    assert client.get_job(job).state == jobs_pb2.JOB_SUCCEEDED
    return client, gemm


def test_a_served_host_kernel_runs_from_python(tuned, tmp_path):
    client, gemm = tuned
    hit = client.lookup(gemm)
    assert hit.result == tiletune_pb2.LookupResponse.RESULT_HIT
    assert hit.record.winner == records_pb2.WINNER_TUNED, hit.record.decision
    kernel = client.get_kernel(gemm, include_source=True)
    assert kernel is not None, client.last_fallback
    assert kernel.abi.struct_name == "tt_gemm_args"
    assert client.kernel_path(kernel).read_bytes() == kernel.code

    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    bias = rng.uniform(-1, 1, N).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    host = kernel.host(tmp_path / "kernel.so")
    host.launch(a=a, b=b, c=c, chain=[bias])
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert np.max(np.abs(c - want) / (np.abs(want) + 1)) < 1e-4

    # The second fetch is answered by hash: the code comes from the disk cache.
    again = client.get_kernel(gemm)
    assert again.artifact.content_hash == kernel.artifact.content_hash
    assert again.code == kernel.code


def test_launch_refuses_arguments_the_kernel_cannot_take(tuned, tmp_path):
    client, gemm = tuned
    host = client.get_kernel(gemm).host(tmp_path / "kernel.so")
    a = np.zeros((M, K), np.float32)
    b = np.zeros((K, N), np.float32)
    c = np.zeros((M, N), np.float32)
    bias = np.zeros(N, np.float32)
    with pytest.raises(LaunchError, match="a: dtype float64"):
        host.launch(a=a.astype(np.float64), b=b, c=c, chain=[bias])
    with pytest.raises(LaunchError, match="b: 1 elements"):
        host.launch(a=a, b=np.zeros(1, np.float32), c=c, chain=[bias])
    with pytest.raises(LaunchError, match="not contiguous"):
        host.launch(a=np.asfortranarray(a), b=b, c=c, chain=[bias])
    with pytest.raises(LaunchError, match="chain: 0 tensors given"):
        host.launch(a=a, b=b, c=c)
    with pytest.raises(LaunchError, match="m: 7; the kernel was built for 160"):
        host.launch(a=a, b=b, c=c, chain=[bias], m=7)
    with pytest.raises(LaunchError, match="no such argument: x"):
        host.launch(a=a, b=b, c=c, chain=[bias], x=a)


def test_a_miss_serves_no_kernel_and_says_what_to_run(tuned):
    client, _ = tuned
    assert client.get_kernel(tiletune.key("gemm", {"m": 33, "n": 17, "k": 5})) is None
    assert client.last_fallback.library == "host-naive"


def test_a_bad_key_is_refused_naming_the_field(daemon):
    client = tiletune.Client(daemon)
    with pytest.raises(tiletune.DaemonError) as refused:
        client.lookup(tiletune.key("gemm", {"m": 4, "n": 4}))
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "key.shape" in refused.value.details


def test_records_list_as_messages(tuned):
    client, gemm = tuned
    records = list(client.list_records(op="gemm"))
    assert any(r.config.kernel_name.startswith("host_gemm") for r in records)

"""The Python package against a real daemon on the host backend: a key tuned
through it, its kernel fetched over the daemon's Unix socket, checked by
content hash and signature, cached on disk and run from Python on numpy
arrays; kernels that must not run (tampered, wrongly signed, signed by an
unknown key) refused with the fallback run instead; the errors a caller
gets; and submissions retried with their request id making one job."""

import hashlib
import os
import socket
import stat

import grpc
import numpy as np
import pytest

import tiletune
from tiletune import LaunchError
from tiletune.v1 import jobs_pb2, records_pb2, tiletune_pb2

# A GEMM tuning wins against host-naive, the tests' host baseline: a decode GEMV, and
# the seed that tries its winner (host_gemm_rowwise) first, as in
# tests/support/tiletuned_process.h (kDecodeGemmSeed; held to it by
# tests/tuner/search_strategy_test.cpp).
M, N, K = 1, 512, 512
DECODE_GEMM_SEED = 21


@pytest.fixture(scope="module")
def tuned(daemon, tmp_path_factory):
    client = tiletune.Client(daemon.unix, timeout=60, cache_dir=tmp_path_factory.mktemp("cache"),
                             trusted_keys=[daemon.signing_key])
    gemm = tiletune.key("gemm", {"m": M, "n": N, "k": K}, chain=["bias", "relu"])
    job = client.submit_job([gemm], max_variants=5, strategy=jobs_pb2.STRATEGY_RANDOM,
                            seed=DECODE_GEMM_SEED)
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
    assert kernel.verified
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
    with pytest.raises(LaunchError, match="a: dtype f64, the kernel takes f32"):
        host.launch(a=a.astype(np.float64), b=b, c=c, chain=[bias])
    with pytest.raises(LaunchError, match="b: 1 elements"):
        host.launch(a=a, b=np.zeros(1, np.float32), c=c, chain=[bias])
    with pytest.raises(LaunchError, match="not contiguous"):
        host.launch(a=a, b=np.asfortranarray(b), c=c, chain=[bias])
    with pytest.raises(LaunchError, match="chain: 0 tensors given"):
        host.launch(a=a, b=b, c=c)
    with pytest.raises(LaunchError, match=f"m: 7; the kernel was built for {M}"):
        host.launch(a=a, b=b, c=c, chain=[bias], m=7)
    with pytest.raises(LaunchError, match="no such argument: x"):
        host.launch(a=a, b=b, c=c, chain=[bias], x=a)


def gemm_reference(a, b, bias):
    return np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0).astype(np.float32)


def run_or_fall_back(client, gemm, path, a, b, bias):
    """What an inference server does: the served kernel if there is one it
    may run, its own call otherwise; and which ran."""
    kernel = client.get_kernel(gemm)
    if kernel is None:
        return gemm_reference(a, b, bias), "fallback: " + client.last_fallback.reason
    c = np.empty((M, N), np.float32)
    kernel.host(path).launch(a=a, b=b, c=c, chain=[bias])
    return c, "tiletune"


def test_kernels_that_must_not_run_are_refused_and_the_fallback_runs(tuned, daemon, tmp_path):
    client, gemm = tuned
    kernel = client.get_kernel(gemm)
    artifact, code = kernel.artifact, kernel.code
    other_key = "ab" * 32

    # Tampered code: the hash no longer matches.
    tampered = bytearray(code)
    tampered[len(tampered) // 2] ^= 0xFF
    with pytest.raises(tiletune.RefusedKernel, match="content hash"):
        tiletune.verify(artifact, bytes(tampered), {daemon.signing_key})
    # A signature that is not the daemon's over this artifact.
    forged = type(artifact)()
    forged.CopyFrom(artifact)
    forged.signature = ("00" if artifact.signature[:2] != "00" else "11") + artifact.signature[2:]
    with pytest.raises(tiletune.RefusedKernel, match="does not verify"):
        tiletune.verify(forged, code, {daemon.signing_key})
    # The code swapped together with its hash: the signature breaks.
    swapped = type(artifact)()
    swapped.CopyFrom(artifact)
    swapped.content_hash = hashlib.sha256(bytes(tampered)).hexdigest()
    with pytest.raises(tiletune.RefusedKernel, match="does not verify"):
        tiletune.verify(swapped, bytes(tampered), {daemon.signing_key})
    # A moved ABI field: the signature covers the ABI too.
    moved = type(artifact)()
    moved.CopyFrom(artifact)
    moved.abi.fields[0].offset += 8
    with pytest.raises(tiletune.RefusedKernel, match="does not verify"):
        tiletune.verify(moved, code, {daemon.signing_key})

    # A client that trusts another key refuses the daemon's kernel, and the
    # server's own call runs.
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    bias = rng.uniform(-1, 1, N).astype(np.float32)
    stranger = tiletune.Client(daemon.unix, timeout=60, cache_dir=tmp_path / "cache",
                               trusted_keys=[other_key])
    c, ran = run_or_fall_back(stranger, gemm, tmp_path / "k.so", a, b, bias)
    assert ran.startswith("fallback: refused: signed by an unknown key"), ran
    np.testing.assert_allclose(c, gemm_reference(a, b, bias), rtol=1e-5)
    # An unverified kernel is not loaded unless the caller says so.
    unverified = tiletune.Client(daemon.unix, timeout=60, cache_dir=tmp_path / "cache2")
    with pytest.raises(tiletune.RefusedKernel, match="not verified"):
        unverified.get_kernel(gemm).host(tmp_path / "k2.so")
    c, ran = run_or_fall_back(client, gemm, tmp_path / "k3.so", a, b, bias)
    assert ran == "tiletune"
    assert np.max(np.abs(c - gemm_reference(a, b, bias))) < 1e-3


def test_transport_rules(daemon):
    # The Unix socket is the daemon's, with the mode it was given.
    assert stat.S_IMODE(os.stat(daemon.socket_path).st_mode) == 0o600
    with pytest.raises(ValueError, match="plaintext TCP to another host"):
        tiletune.Client("10.11.12.13:7733")
    tiletune.Client("10.11.12.13:7733", allow_plaintext_remote=True).close()
    over_tcp = tiletune.Client(daemon.address)
    assert len(over_tcp.list_devices().devices) >= 1


def test_a_miss_serves_no_kernel_and_says_what_to_run(tuned):
    client, _ = tuned
    assert client.get_kernel(tiletune.key("gemm", {"m": 33, "n": 17, "k": 5})) is None
    assert client.last_fallback.library == "host-naive"


def test_a_bad_key_is_refused_naming_the_field(daemon):
    client = tiletune.Client(daemon.address)
    with pytest.raises(tiletune.DaemonError) as refused:
        client.lookup(tiletune.key("gemm", {"m": 4, "n": 4}))
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "key.shape" in refused.value.details


def test_lookups_on_one_stream_answer_as_lookup_does(tuned):
    client, gemm = tuned
    with client.lookup_stream() as stream:
        assert stream.lookup(gemm) == client.lookup(gemm)
        with pytest.raises(tiletune.DaemonError) as refused:
            stream.lookup(tiletune.key("gemm", {"m": 4, "n": 4}))
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "key.shape" in refused.value.details
        # That lookup failed alone: the stream goes on.
        missed = stream.lookup(tiletune.key("gemm", {"m": 31, "n": 9, "k": 7}))
        assert missed.result == tiletune_pb2.LookupResponse.RESULT_MISS


def test_records_list_as_messages(tuned):
    client, gemm = tuned
    records = list(client.list_records(op="gemm"))
    assert any(r.config.kernel_name.startswith("host_gemm") for r in records)


def test_every_rpc_from_python(tuned, daemon):
    client, gemm = tuned
    miss = tiletune.key("gemm", {"m": 31, "n": 9, "k": 7})
    hit, missed = client.batch_lookup([gemm, miss])
    assert hit.result == tiletune_pb2.LookupResponse.RESULT_HIT
    assert missed.result == tiletune_pb2.LookupResponse.RESULT_MISS
    record = tiletune.as_dict(hit.record)
    assert record["winner"] == "WINNER_TUNED" and record["config"]["kernel_name"]

    assert any(j.state == jobs_pb2.JOB_SUCCEEDED for j in client.list_jobs())
    # The job that measured the served record: its trials and its decision.
    measured = client.get_job(hit.record.job_id)
    trials = list(client.list_trials(measured.id, page_size=1))
    assert len(trials) == measured.items[0].benchmarked + measured.items[0].failed
    assert [t.id for t in trials] == sorted(t.id for t in trials)
    assert client.item_record(measured.id).decision == hit.record.decision
    exported = client.export_records(op="gemm")
    assert exported.count("\n") >= 1
    assert "already exists" in client.import_records(exported, dry_run=True).rejects[0].message
    # Trusted, so the record the other tests look up stays served.
    replaced = client.import_records(exported, replace=True, trust=True)
    assert replaced.imported == exported.count("\n") and not replaced.rejects, replaced
    assert not replaced.verifications, replaced

    # A long job, cancelled: watched to its end with progress.
    long = client.submit_job([tiletune.key("gemm", {"m": 200, "n": 200, "k": 200})],
                             max_variants=500, name="to-cancel")
    assert client.cancel_job(long).id == long
    seen = []
    job = client.wait_job(long, progress=seen.append)
    assert job.state == jobs_pb2.JOB_CANCELLED, job
    assert seen and seen[-1].kind == jobs_pb2.JobEvent.KIND_JOB_FINISHED


def test_a_retried_submission_with_its_request_id_is_one_job(daemon):
    client = tiletune.Client(daemon.address, timeout=60)
    softmax = tiletune.key("softmax", {"rows": 8, "cols": 100})
    first = client.submit_job([softmax], max_variants=1, request_id="py-once")
    assert client.submit_job([softmax], max_variants=1, request_id="py-once") == first
    with pytest.raises(tiletune.DaemonError) as other_spec:
        client.submit_job([softmax], max_variants=2, request_id="py-once")
    assert other_spec.value.code == grpc.StatusCode.ALREADY_EXISTS
    assert other_spec.value.details.startswith("request_id: 'py-once' already made job " + first)
    with pytest.raises(tiletune.DaemonError) as bad:
        client.submit_job([softmax], request_id="two words")
    assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert bad.value.details.startswith("request_id: ")

    # Calls at 1 ms end DEADLINE_EXCEEDED and may still make their job;
    # retried with their ids, each makes one.
    once = tiletune.Client(daemon.address, submit_retry=tiletune.SubmitRetry(attempts=1))
    late = [f"py-late-{i}" for i in range(10)]
    for request_id in late:
        try:
            once.submit_job([softmax], max_variants=1, request_id=request_id, timeout=0.001)
        except tiletune.DaemonError as e:
            assert e.code == grpc.StatusCode.DEADLINE_EXCEEDED
        client.submit_job([softmax], max_variants=1, request_id=request_id)
    request_ids = [job.request_id for job in client.list_jobs()]
    assert [request_ids.count(r) for r in late + ["py-once"]] == [1] * 11

    # Without one, each call gets a new random id: a job of its own.
    a = client.get_job(client.submit_job([softmax], max_variants=1))
    b = client.get_job(client.submit_job([softmax], max_variants=1))
    assert a.id != b.id and len(a.request_id) == 32 and a.request_id != b.request_id


def test_a_submission_the_daemon_never_saw_is_retried_a_bounded_number_of_times():
    # A bound port that does not listen: every call is refused (UNAVAILABLE).
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        retries = []
        client = tiletune.Client(
            f"127.0.0.1:{closed.getsockname()[1]}", timeout=5,
            submit_retry=tiletune.SubmitRetry(
                attempts=3, initial_backoff=0.01,
                on_retry=lambda error, attempt: retries.append((error.code, attempt))))
        with pytest.raises(tiletune.DaemonError) as refused:
            client.submit_job([tiletune.key("softmax", {"rows": 8, "cols": 100})])
        assert refused.value.code == grpc.StatusCode.UNAVAILABLE
        assert retries == [(grpc.StatusCode.UNAVAILABLE, 2), (grpc.StatusCode.UNAVAILABLE, 3)]

"""The daemon's RPCs over gRPC, with kernels cached on disk by content hash."""

import ctypes
import ctypes.util
import dataclasses
import hashlib
import ipaddress
import os
import pathlib
import queue
import secrets
import struct
import time
import typing

import grpc
from google.protobuf import json_format

from tiletune.v1 import kernel_key_pb2, tiletune_pb2, tiletune_pb2_grpc

_DTYPES = {"f32": kernel_key_pb2.DTYPE_F32, "f16": kernel_key_pb2.DTYPE_F16,
           "bf16": kernel_key_pb2.DTYPE_BF16, "f64": kernel_key_pb2.DTYPE_F64}


class DaemonError(RuntimeError):
    """A call the daemon refused: `code` is the gRPC status code, `details`
    its message (an INVALID_ARGUMENT names the field)."""

    def __init__(self, code, details):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


# The calls whose outcome a client cannot know: the daemon may have created
# the job, or never seen the call.
_MAY_RETRY = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def new_request_id():
    """A new SubmitJobRequest.request_id: 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)


@dataclasses.dataclass
class SubmitRetry:
    """How submit_job retries a call that may or may not have reached the
    daemon (UNAVAILABLE, DEADLINE_EXCEEDED): always with the same request_id,
    so the daemon makes the job at most once. `attempts` counts the first
    call; the wait before each retry starts at `initial_backoff` seconds and
    doubles up to `max_backoff`. `on_retry(error, next_attempt)`, when given,
    is told before each retry."""

    attempts: int = 5
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    on_retry: typing.Optional[typing.Callable[["DaemonError", int], None]] = None


def key(op, dims, dtype="f32", out_dtype=None, chain=(), prologue=(), layouts=None, gate=None):
    """A KernelKey: key("gemm", {"m": 64, "n": 32, "k": 16}, chain=["bias", "relu"]);
    gate="swiglu" gates a gemm: chain(silu(a·b) ⊙ (a·b_up))."""
    k = kernel_key_pb2.KernelKey(op=op, input_dtype=_DTYPES[dtype],
                                 output_dtype=_DTYPES[out_dtype or dtype])
    if gate:
        k.gate = kernel_key_pb2.Gate.Value("GATE_" + gate.upper())
    for name, size in dims.items():
        k.shape.add(name=name, size=size)
    for op_name in chain:
        k.chain.add(op=op_name)
    for op_name in prologue:
        k.prologue.add(op=op_name)
    for tensor, layout in (layouts or {}).items():
        k.layouts.add(tensor=tensor, layout=kernel_key_pb2.LAYOUT_COL_MAJOR
                      if layout == "col" else kernel_key_pb2.LAYOUT_ROW_MAJOR)
    return k


def as_dict(message):
    """A record, job or any other answer as plain dicts and lists (field
    names as in the .proto, enums by name)."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


class RefusedKernel(Exception):
    """A served kernel that must not be loaded: its code does not match its
    content hash, or its signature does not verify under a trusted key."""


_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}
_END = object()


class LookupStream:
    """Lookups on one LookupStream call, one at a time: lookup() sends a
    request and returns its LookupResponse, or raises DaemonError for that
    lookup alone (a bad key: the stream goes on) or for the stream (then the
    next lookup opens a new one). close() (or `with`) ends the call. Made by
    Client.lookup_stream()."""

    def __init__(self, stub, timeout):
        self._stub = stub
        self._timeout = timeout
        self._open()

    def _open(self):
        self._requests = queue.SimpleQueue()
        self._answers = self._stub.LookupStream(iter(self._requests.get, _END),
                                                timeout=self._timeout)

    def lookup(self, kernel_key, tune_on_miss=False, device=""):
        self._requests.put(Client._lookup_request(kernel_key, tune_on_miss, device))
        try:
            answer = next(self._answers)
        except grpc.RpcError as e:
            self._open()
            raise DaemonError(e.code(), e.details()) from None
        except StopIteration:
            self._open()
            raise DaemonError(grpc.StatusCode.UNAVAILABLE, "the lookup stream ended") from None
        if answer.code:
            raise DaemonError(_STATUS_CODES.get(answer.code, grpc.StatusCode.UNKNOWN),
                              answer.message)
        return answer.response

    def close(self):
        self._requests.put(_END)  # the daemon then ends the call

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _dims(sizes):
    return "x".join(str(size) for size in sizes) or "-"


def signed_statement(artifact):
    """What a KernelArtifact's signature covers (docs/kernel-abi.md,
    "Signatures"): the same text the daemon signs."""
    abi, launch = artifact.abi, artifact.launch
    lines = ["tiletune-artifact=3",
             f"content_hash={artifact.content_hash}",
             f"code_bytes={artifact.code_bytes}",
             f"format={artifact.format}",
             f"entry={artifact.entry}",
             f"target={artifact.target}",
             f"device_class={artifact.device_class}",
             f"kernel_name={artifact.kernel_name}",
             f"source_hash={artifact.source_hash}",
             f"key={artifact.canonical_key}",
             f"launch={_dims(launch.grid)} {_dims(launch.block)} {launch.shared_memory_bytes} "
             f"{launch.threads} {launch.blocks_per_compute_unit} {launch.argument_bytes}"]
    # A map's view, where it has one, ends its line (older statements stay as they were).
    lines += [f"tensor_map={m.tensor} {m.offset} {m.box_inner} {m.box_rows} {m.swizzle_bytes}"
              + (f" {_dims(m.view)}" if m.view else "") for m in launch.tensor_maps]
    lines.append(f"abi={abi.struct_name} {abi.version} {abi.struct_bytes} {abi.passing} "
                 f"{abi.struct_alignment} {abi.max_chain} {abi.tensor_alignment}")
    for f in abi.fields:
        bits = struct.pack(">d", f.default_value).hex()
        lines.append(f"field={f.name} {f.kind} {f.offset} {f.bytes} {f.value} {f.role} {f.dtype} "
                     f"{_dims(f.shape)} {f.layout} {int(f.may_be_null)} {bits}")
        lines += [f"slot={s.op} {int(s.tensor)} {s.dtype} {_dims(s.shape)} {int(s.scalar)}"
                  for s in f.chain]
    return ("\n".join(lines) + "\n").encode()


def verify(artifact, code, trusted_keys):
    """Raises RefusedKernel unless `code` is the artifact's (content hash)
    and the artifact is signed by one of `trusted_keys` (hex ed25519 public
    keys); None for trusted_keys skips the signature check only."""
    if hashlib.sha256(code).hexdigest() != artifact.content_hash or \
            len(code) != artifact.code_bytes:
        raise RefusedKernel("the kernel's code does not match its content hash "
                            f"{artifact.content_hash[:16]}...")
    if trusted_keys is None:
        return False
    if artifact.signing_key not in trusted_keys:
        raise RefusedKernel(f"signed by an unknown key {artifact.signing_key[:16]}...; "
                            "trusted: " + ", ".join(k[:16] + "..." for k in trusted_keys))
    public_key = bytes.fromhex(artifact.signing_key) if _is_hex(artifact.signing_key) else b""
    signature = bytes.fromhex(artifact.signature) if _is_hex(artifact.signature) else b""
    if len(public_key) != 32 or len(signature) != 64 or not _ed25519_verifies(
            signature, signed_statement(artifact), public_key):
        raise RefusedKernel("the kernel's signature does not verify under "
                            f"{artifact.signing_key[:16]}...")
    return True


def write_atomically(path, data):
    """`data` at `path` by a rename, never rewritten in place: a reader (or a
    library loaded from there) sees the old file or the new one, whole."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _is_hex(text):
    try:
        bytes.fromhex(text)
        return True
    except ValueError:
        return False


_sodium = None


def _ed25519_verifies(signature, message, public_key):
    """libsodium's crypto_sign_verify_detached (the daemon signs with it)."""
    global _sodium
    if _sodium is None:
        name = ctypes.util.find_library("sodium") or "libsodium.so.23"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise RefusedKernel(f"cannot check signatures: libsodium cannot be loaded ({e})")
        if lib.sodium_init() < 0:
            raise RefusedKernel("cannot check signatures: sodium_init failed")
        _sodium = lib
    return _sodium.crypto_sign_verify_detached(signature, message,
                                               ctypes.c_ulonglong(len(message)),
                                               public_key) == 0


class Kernel:
    """A served kernel: its artifact description (KernelArtifact) and its
    code, checked against the content hash the daemon named and, when the
    client trusts keys, against the daemon's signature (`verified`)."""

    def __init__(self, artifact, code, record, trusted_keys=None):
        self.verified = verify(artifact, code, trusted_keys)
        self.artifact = artifact
        self.code = code
        self.record = record

    @property
    def abi(self):
        return self.artifact.abi

    def host(self, path, allow_unsigned=False):
        """This host kernel loaded from `path` (where its code is written),
        ready to launch: a HostKernel. Loading runs the daemon's code in this
        process: only a verified kernel, unless `allow_unsigned`."""
        if not self.verified and not allow_unsigned:
            raise RefusedKernel("not verified: give the Client trusted_keys (the daemon's "
                                "signing key), or pass allow_unsigned=True")
        from tiletune.host_launcher import HostKernel
        return HostKernel(self, path)

    def cuda(self, device="cuda:0", allow_unsigned=False, prepared_launches=None):
        """This CUBIN loaded into the current CUDA context (that of
        `device`, where its tensors must live), ready to launch on a stream:
        a CudaKernel (`prepared_launches`: its bound launches' packed
        arguments kept, default cuda_launcher.PREPARED_LAUNCHES). Only a
        verified kernel, unless `allow_unsigned`."""
        if not self.verified and not allow_unsigned:
            raise RefusedKernel("not verified: give the Client trusted_keys (the daemon's "
                                "signing key), or pass allow_unsigned=True")
        from tiletune.cuda_launcher import PREPARED_LAUNCHES, CudaKernel
        return CudaKernel(self, device, PREPARED_LAUNCHES if prepared_launches is None
                          else prepared_launches)


def _loopback(address):
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def open_channel(address, tls_ca=None, allow_plaintext_remote=False):
    """A channel to the daemon: TLS to a daemon whose CA (PEM bytes or a
    file path) is given; a node-local Unix socket ("unix:/path") or loopback
    in plaintext; plaintext TCP to another host only when the operator says
    so (`allow_plaintext_remote`)."""
    if tls_ca is not None:
        pem = tls_ca if isinstance(tls_ca, bytes) else pathlib.Path(tls_ca).read_bytes()
        return grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=pem))
    if address.startswith("unix:") or _loopback(address) or allow_plaintext_remote:
        return grpc.insecure_channel(address)
    raise ValueError(f"{address}: plaintext TCP to another host; give tls_ca, use a unix: "
                     "socket, or pass allow_plaintext_remote=True")


class Client:
    """One daemon. `address` is host:port or unix:/path; calls time out
    after `timeout` seconds. Kernels fetched by get_kernel are kept under
    `cache_dir` by content hash and asked for again only by that hash;
    with `trusted_keys` (hex ed25519 public keys of daemons) each is loaded
    only when its signature verifies. `submit_retry` (a SubmitRetry) says
    how submit_job retries."""

    def __init__(self, address, timeout=10.0, cache_dir=None, trusted_keys=None, tls_ca=None,
                 allow_plaintext_remote=False, channel=None, submit_retry=None):
        self._channel = channel or open_channel(address, tls_ca, allow_plaintext_remote)
        self.trusted_keys = None if trusted_keys is None else set(trusted_keys)
        self._stub = tiletune_pb2_grpc.TuningServiceStub(self._channel)
        self._timeout = timeout
        self.submit_retry = submit_retry or SubmitRetry()
        self.cache_dir = pathlib.Path(cache_dir or os.path.join(
            os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tiletune"))

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, timeout=None):
        try:
            return method(request, timeout=timeout or self._timeout)
        except grpc.RpcError as e:
            raise DaemonError(e.code(), e.details()) from None

    @staticmethod
    def _lookup_request(kernel_key, tune_on_miss, device):
        request = tiletune_pb2.LookupRequest(key=kernel_key, tune_on_miss=tune_on_miss)
        request.device.device = device
        return request

    def lookup(self, kernel_key, tune_on_miss=False, device=""):
        return self._call(self._stub.Lookup,
                          self._lookup_request(kernel_key, tune_on_miss, device))

    def lookup_stream(self, timeout=None):
        """A LookupStream: lookups on one long-lived call, for a caller that
        asks often (about half the cost of a lookup() each). `timeout`, in
        seconds, bounds the whole stream (None: the daemon's
        max_stream_seconds does)."""
        return LookupStream(self._stub, timeout)

    def batch_lookup(self, kernel_keys, tune_on_miss=False, device=""):
        """One LookupResponse per key, in order, in one call."""
        request = tiletune_pb2.BatchLookupRequest(requests=[
            self._lookup_request(k, tune_on_miss, device) for k in kernel_keys])
        return list(self._call(self._stub.BatchLookup, request).responses)

    def submit_job(self, kernels, max_variants=None, strategy=None, seed=None, name="",
                   device="", request_id=None, timeout=None):
        """The job's id; `device` is the daemon's device to tune on
        ("cuda:0"; empty: the daemon's first that takes the kernels).
        `request_id` is the submission's idempotency key (None: a new random
        one): a call that times out or finds the daemon unreachable is sent
        again with it (self.submit_retry), and submitting again with the same
        one answers the job it made. `timeout`: seconds per attempt (the
        client's timeout when None)."""
        request = tiletune_pb2.SubmitJobRequest(request_id=request_id or new_request_id())
        request.spec.name = name
        request.spec.device.device = device
        for k in kernels:
            request.spec.kernels.add().CopyFrom(k)
        if max_variants:
            request.spec.budget.max_variants = max_variants
        if strategy is not None:
            request.spec.strategy = strategy
        if seed is not None:
            request.spec.seed = seed
        retry = self.submit_retry
        backoff = retry.initial_backoff
        attempt = 1
        while True:
            try:
                return self._stub.SubmitJob(request, timeout=timeout or self._timeout).job_id
            except grpc.RpcError as e:
                error = DaemonError(e.code(), e.details())
                if e.code() not in _MAY_RETRY or attempt >= retry.attempts:
                    raise error from None
            attempt += 1
            if retry.on_retry is not None:
                retry.on_retry(error, attempt)
            time.sleep(backoff)
            backoff = min(backoff * 2, retry.max_backoff)

    def watch_job(self, job_id, timeout=600.0):
        """The job's events until it ends (a generator)."""
        try:
            yield from self._stub.WatchJob(tiletune_pb2.WatchJobRequest(job_id=job_id),
                                           timeout=timeout)
        except grpc.RpcError as e:
            raise DaemonError(e.code(), e.details()) from None

    def wait_job(self, job_id, progress=None, timeout=600.0):
        """Watches the job to its end, calling `progress(event)` for each
        event; returns the finished Job."""
        for event in self.watch_job(job_id, timeout):
            if progress is not None:
                progress(event)
        return self.get_job(job_id)

    def get_job(self, job_id):
        return self._call(self._stub.GetJob, tiletune_pb2.GetJobRequest(job_id=job_id))

    def list_jobs(self, states=(), page_size=100):
        """Every job (of `states`, JobState values; all when empty), page by page."""
        token = ""
        while True:
            page = self._call(self._stub.ListJobs, tiletune_pb2.ListJobsRequest(
                states=list(states), page_size=page_size, page_token=token))
            yield from page.jobs
            token = page.next_page_token
            if not token:
                return

    def list_trials(self, job_id, item_index=0, page_size=100):
        """Every trial of one job item, in the order they were stored, page by
        page (a generator of Trial messages)."""
        token = ""
        while True:
            page = self._call(self._stub.ListTrials, tiletune_pb2.ListTrialsRequest(
                job_id=job_id, item_index=item_index, page_size=page_size, page_token=token))
            yield from page.trials
            token = page.next_page_token
            if not token:
                return

    def item_record(self, job_id, item_index=0):
        """The record the item's key has now on its device class (with the
        decision), or None."""
        page = self._call(self._stub.ListTrials, tiletune_pb2.ListTrialsRequest(
            job_id=job_id, item_index=item_index, page_size=1))
        return page.record if page.HasField("record") else None

    def cancel_job(self, job_id):
        return self._call(self._stub.CancelJob, tiletune_pb2.CancelJobRequest(job_id=job_id))

    def export_records(self, op="", device_class=""):
        """The records as JSON Lines text (what import_records takes)."""
        request = tiletune_pb2.ExportRecordsRequest(op=op, device_class=device_class)
        try:
            lines = [json_format.MessageToJson(line, indent=None)
                     for line in self._stub.ExportRecords(request, timeout=self._timeout)]
        except grpc.RpcError as e:
            raise DaemonError(e.code(), e.details()) from None
        return "".join(line + "\n" for line in lines)

    def import_records(self, jsonl, replace=False, dry_run=False, trust=False):
        """All or nothing; without trust the records are served only once a
        verify job re-measured them on this daemon (see the answer's
        verifications)."""
        return self._call(self._stub.ImportRecords, tiletune_pb2.ImportRecordsRequest(
            jsonl=jsonl, replace=replace, dry_run=dry_run, trust=trust))

    def list_records(self, op="", device_class="", page_size=100):
        """Every record, page by page (a generator of Record messages)."""
        token = ""
        while True:
            page = self._call(self._stub.ListRecords, tiletune_pb2.ListRecordsRequest(
                op=op, device_class=device_class, page_size=page_size, page_token=token))
            yield from page.records
            token = page.next_page_token
            if not token:
                return

    def list_devices(self):
        return self._call(self._stub.ListDevices, tiletune_pb2.ListDevicesRequest())

    def get_kernel(self, kernel_key, device="", include_source=False):
        """The kernel the daemon serves for the key, or None when there is
        none to run (a miss, a VENDOR record, a kernel refused by its hash or
        signature: run your own; `last_fallback` says why). From the disk
        cache when the daemon still serves the same content hash."""
        self.last_fallback = None
        request = tiletune_pb2.GetKernelRequest(key=kernel_key, include_source=include_source)
        request.device.device = device
        cached_hash, cached_code = self._cached_for(kernel_key, device)
        if cached_hash is not None:
            request.cached_content_hash = cached_hash
        head, code = None, bytearray()
        try:
            for message in self._stub.GetKernel(request, timeout=self._timeout):
                if head is None:
                    head = message
                code += message.code_chunk
        except grpc.RpcError as e:
            raise DaemonError(e.code(), e.details()) from None
        if head is None or not head.HasField("artifact"):
            self.last_fallback = head.fallback if head is not None else None
            return None
        artifact = head.artifact
        if head.unchanged:
            code = cached_code
        try:
            kernel = Kernel(artifact, bytes(code), head.record, self.trusted_keys)
        except RefusedKernel as refused:
            self.last_fallback = tiletune_pb2.Fallback(library=head.record.baseline_name,
                                                       reason=f"refused: {refused}")
            return None
        self._remember(kernel_key, device, kernel)
        return kernel

    def _index_path(self, kernel_key, device):
        name = hashlib.sha256(kernel_key.SerializeToString(deterministic=True) +
                              device.encode()).hexdigest()
        return self.cache_dir / "keys" / name

    def _cached_for(self, kernel_key, device):
        """The content hash and code cached for the key, or (None, None)."""
        try:
            content_hash = self._index_path(kernel_key, device).read_text().strip()
            code = (self.cache_dir / content_hash).read_bytes()
        except OSError:
            return None, None
        if hashlib.sha256(code).hexdigest() != content_hash:
            return None, None  # damaged on disk: fetch it again
        return content_hash, code

    def _remember(self, kernel_key, device, kernel):
        (self.cache_dir / "keys").mkdir(parents=True, exist_ok=True)
        code_path = self.cache_dir / kernel.artifact.content_hash
        if not code_path.exists():
            write_atomically(code_path, kernel.code)
        write_atomically(self._index_path(kernel_key, device),
                               kernel.artifact.content_hash.encode())

    def kernel_path(self, kernel):
        """Where the kernel's code lies in the disk cache."""
        return self.cache_dir / kernel.artifact.content_hash

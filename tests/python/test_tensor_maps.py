"""TMA kernels' tensor maps in the Python client, without a GPU or a daemon:
the signed statement of a TMA kernel's artifact (tests/client/data/
tma_artifact.*, which the C++ launcher's tests check too) and every tampered
map refused, the maps planned for the ABI with each refusal naming the
entry, its tensor and the rule (the same texts as runtime/cuda/
tensor_map.cpp's), tensor maps refused for host code, and as_dict showing
them."""

import ctypes
import ctypes.util
import hashlib
import pathlib

import pytest
from google.protobuf import text_format

import tiletune
from tiletune import LaunchError
from tiletune.client import signed_statement
from tiletune.launch_abi import check_loadable, plan_tensor_maps
from tiletune.v1 import artifacts_pb2, kernel_key_pb2, records_pb2

DATA = pathlib.Path(__file__).resolve().parents[1] / "client" / "data"
A = artifacts_pb2


def tma_artifact():
    return text_format.Parse((DATA / "tma_artifact.textproto").read_text(), A.KernelArtifact())


def test_the_statement_covers_the_tensor_maps_and_the_argument_size():
    assert signed_statement(tma_artifact()) == (DATA / "tma_artifact.statement").read_bytes()


def signed(artifact, code):
    """`artifact` for `code`, signed by a fresh ed25519 key; and that key."""
    sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
    assert sodium.sodium_init() >= 0
    public, secret = ctypes.create_string_buffer(32), ctypes.create_string_buffer(64)
    sodium.crypto_sign_keypair(public, secret)
    artifact.content_hash = hashlib.sha256(code).hexdigest()
    artifact.code_bytes = len(code)
    artifact.signing_key = public.raw.hex()
    statement = signed_statement(artifact)
    signature = ctypes.create_string_buffer(64)
    sodium.crypto_sign_detached(signature, None, statement, ctypes.c_ulonglong(len(statement)),
                                secret)
    artifact.signature = signature.raw.hex()
    return artifact, artifact.signing_key


def test_a_tampered_tensor_map_is_refused():
    code = b"a TMA kernel's code"
    artifact, key = signed(tma_artifact(), code)
    assert tiletune.verify(artifact, code, {key})

    def moved(launch):
        launch.tensor_maps[0].offset = 576

    def other_tensor(launch):
        launch.tensor_maps[1].tensor = "c"

    def wider_box(launch):
        launch.tensor_maps[0].box_inner = 32

    def fewer_rows(launch):
        launch.tensor_maps[1].box_rows = 8

    def other_swizzle(launch):
        launch.tensor_maps[0].swizzle_bytes = 64

    def left_out(launch):
        del launch.tensor_maps[1]

    def added(launch):
        launch.tensor_maps.add().CopyFrom(launch.tensor_maps[0])

    def longer(launch):
        launch.argument_bytes = 768

    for tamper in (moved, other_tensor, wider_box, fewer_rows, other_swizzle, left_out, added,
                   longer):
        tampered = A.KernelArtifact()
        tampered.CopyFrom(artifact)
        tamper(tampered.launch)
        with pytest.raises(tiletune.RefusedKernel, match="does not verify"):
            tiletune.verify(tampered, code, {key})


def test_the_maps_are_planned_for_the_tensors_as_stored():
    artifact = tma_artifact()
    a, b = plan_tensor_maps(artifact.launch, artifact.abi)
    fields = {f.name: f for f in artifact.abi.fields}
    # a [3][37][200] and b [3][200][200], bf16 (CU_TENSOR_MAP_DATA_TYPE_BFLOAT16), row-major.
    assert (a.tensor, a.field_offset, a.offset) == ("a", fields["a"].offset, 320)
    assert (a.data_type, a.dims, a.strides) == (9, (200, 37, 3), (400, 400 * 37))
    assert (a.box, a.swizzle) == ((64, 16, 1), 3)  # CU_TENSOR_MAP_SWIZZLE_128B
    assert (b.tensor, b.field_offset, b.offset) == ("b", fields["b"].offset, 448)
    assert (b.dims, b.strides, b.box) == ((200, 200, 3), (400, 400 * 200), (64, 32, 1))
    # Column-major: the other extent is the contiguous one.
    fields["b"].layout = kernel_key_pb2.LAYOUT_COL_MAJOR
    fields["b"].shape[:] = [3, 200, 136]
    assert plan_tensor_maps(artifact.launch, artifact.abi)[1].dims == (200, 136, 3)


def test_a_view_replaces_the_shapes_batch_rows_and_inner():
    artifact = tma_artifact()
    # a [3][37][200] viewed as [1][111][200]: the batch entries as one run of rows.
    artifact.launch.tensor_maps[0].view[:] = [1, 111, 200]
    a = plan_tensor_maps(artifact.launch, artifact.abi)[0]
    assert (a.dims, a.strides) == ((200, 111, 1), (400, 400 * 111))
    assert "tensor_map=a 320 64 16 128 1x111x200\n" in signed_statement(artifact).decode()


def refusal(tamper):
    artifact = tma_artifact()
    tamper(artifact.launch, {f.name: f for f in artifact.abi.fields})
    with pytest.raises(LaunchError) as refused:
        plan_tensor_maps(artifact.launch, artifact.abi)
    return str(refused.value)


def test_maps_that_cannot_be_encoded_are_refused_naming_the_rule():
    def argument(bytes_):
        return lambda launch, fields: setattr(launch, "argument_bytes", bytes_)

    def map0(name, value):
        return lambda launch, fields: setattr(launch.tensor_maps[0], name, value)

    assert refusal(argument(0)) == \
        "argument_bytes 0 leaves no room for tensor maps after the 280-byte struct"
    assert refusal(argument(4160)) == ("argument_bytes 4160 is past cuLaunchKernel's limit of "
                                       "4096 bytes of kernel parameters")
    assert refusal(argument(720)) == \
        "argument_bytes 720 is not a multiple of 64, as a struct holding tensor maps is"
    assert refusal(map0("tensor", "")) == "tensor_maps[0] (no tensor): names no tensor"
    assert refusal(map0("offset", 328)) == "tensor_maps[0] (a): offset 328 is not a multiple of 64"
    assert refusal(map0("offset", 256)) == \
        "tensor_maps[0] (a): offset 256 overlaps the 280-byte struct"
    assert refusal(map0("offset", 768)) == \
        "tensor_maps[0] (a): offset 768 puts its 128 bytes past argument_bytes 832"
    assert refusal(map0("offset", 384)) == \
        "tensor_maps[1] (b): offset 448 overlaps tensor_maps[0] (a)"
    assert refusal(map0("box_rows", 257)) == "tensor_maps[0] (a): box_rows 257 is outside 1..256"
    assert refusal(map0("swizzle_bytes", 16)) == \
        "tensor_maps[0] (a): swizzle_bytes 16 is none of 0, 32, 64, 128"
    assert refusal(map0("tensor", "x")) == \
        "tensor_maps[0] (x): tt_gemm_args has no tensor of that name"
    assert refusal(map0("box_inner", 12)) == \
        "tensor_maps[0] (a): box_inner of 12 elements is 24 bytes, not a multiple of 16 bytes"
    assert refusal(map0("box_inner", 128)) == ("tensor_maps[0] (a): box_inner of 128 elements is "
                                               "256 bytes, wider than its 128-byte swizzle")

    def odd_rows(launch, fields):
        fields["a"].shape[:] = [3, 37, 29]

    assert refusal(odd_rows) == ("tensor_maps[0] (a): row stride of 58 bytes (29 elements of 2) "
                                 "is not a multiple of 16 bytes")

    def f64(launch, fields):
        fields["a"].dtype = kernel_key_pb2.DTYPE_F64

    assert refusal(f64) == ("tensor_maps[0] (a): its tensor's dtype DTYPE_F64 has no tensor map "
                            "element type here (bf16, f16, f32)")

    assert refusal(lambda launch, fields: launch.tensor_maps[0].view.extend([111, 200])) == (
        "tensor_maps[0] (a): view of 2 sizes holding 22200 elements is not [batch][rows][inner] "
        "of its tensor's 22200")
    assert refusal(lambda launch, fields: launch.tensor_maps[0].view.extend([1, 112, 200])) == (
        "tensor_maps[0] (a): view of 3 sizes holding 22400 elements is not [batch][rows][inner] "
        "of its tensor's 22200")

    def none(launch, fields):
        del launch.tensor_maps[:]

    assert refusal(none) == "argument_bytes 832 without tensor maps (0 unless the kernel takes some)"


def test_host_code_with_tensor_maps_is_refused():
    artifact = tma_artifact()
    artifact.format = A.KernelArtifact.FORMAT_HOST_SHARED_OBJECT
    artifact.abi.passing = A.KernelAbi.PASSING_POINTER
    with pytest.raises(LaunchError, match="tensor maps, which only CUBINs take"):
        check_loadable(artifact, A.KernelArtifact.FORMAT_HOST_SHARED_OBJECT,
                       A.KernelAbi.PASSING_POINTER, "a host shared object")


def test_as_dict_shows_the_tensor_maps():
    record = records_pb2.Record()
    record.config.launch.CopyFrom(tma_artifact().launch)
    launch = tiletune.as_dict(record)["config"]["launch"]
    assert launch["argument_bytes"] == "832"
    assert launch["tensor_maps"][0] == {"tensor": "a", "offset": "320", "box_inner": "64",
                                        "box_rows": "16", "swizzle_bytes": 128}

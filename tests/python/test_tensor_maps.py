"""TMA kernels' tensor maps in the Python client, without a GPU or a daemon:
the signed statement of a TMA kernel's artifact (tests/client/data/
tma_artifact.*, which the C++ launcher's tests check too) and every tampered
map refused."""

import ctypes
import ctypes.util
import hashlib
import pathlib

import pytest
from google.protobuf import text_format

import tiletune
from tiletune.client import signed_statement
from tiletune.v1 import artifacts_pb2

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

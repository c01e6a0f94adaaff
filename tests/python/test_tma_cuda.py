"""The Python launcher's tensor maps on an sm_90+ GPU: the TMA test kernel
(tests/support/tma_box_copy.cu) compiled with NVRTC and served as
tests/client/data/tma_artifact.textproto describes it (a box copy of a
bf16 [3][37][200], no side a multiple of its 64 x 16 box), launched with
the map of `a` the launcher encodes, through launch() and bind(), on
different tensors each time, checked bit for bit with nothing written past
c. Skipped without torch, CUDA, sm_90 or NVRTC."""

import ctypes
import ctypes.util
import hashlib
import pathlib

import pytest
from google.protobuf import text_format

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability()[0] < 9:
    pytest.skip("tensor maps need sm_90+", allow_module_level=True)

import tiletune  # noqa: E402
from tiletune import LaunchError  # noqa: E402
from tiletune.v1 import artifacts_pb2  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUARD = 2048  # elements past c that must stay as they were
POISON = 0x5A5A


def nvrtc():
    for name in (ctypes.util.find_library("nvrtc"), "libnvrtc.so.13", "libnvrtc.so.12"):
        try:
            return ctypes.CDLL(name)
        except (OSError, TypeError):
            continue
    pytest.skip("no libnvrtc")


def compile_cubin(source, arch):
    lib = nvrtc()
    program = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"tma_box_copy.cu", 0,
                                  None, None) == 0
    options = [f"--gpu-architecture={arch}".encode(),
               f"--include-path={ROOT / 'kernels'}".encode(), b"-std=c++17"]
    status = lib.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
    if status != 0:
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log)
        pytest.fail("NVRTC: " + log.value.decode())
    size = ctypes.c_size_t()
    assert lib.nvrtcGetCUBINSize(program, ctypes.byref(size)) == 0
    cubin = ctypes.create_string_buffer(size.value)
    assert lib.nvrtcGetCUBIN(program, cubin) == 0
    lib.nvrtcDestroyProgram(ctypes.byref(program))
    return cubin.raw


@pytest.fixture(scope="module")
def served():
    artifact = text_format.Parse(
        (ROOT / "tests/client/data/tma_artifact.textproto").read_text(),
        artifacts_pb2.KernelArtifact())
    box = artifact.launch.tensor_maps[0]
    assert box.tensor == "a"
    defines = {"TT_TEST_ELEMENT_BYTES": 2, "TT_TEST_BOX_INNER": box.box_inner,
               "TT_TEST_BOX_ROWS": box.box_rows, "TT_TEST_SWIZZLE_BYTES": box.swizzle_bytes}
    source = "".join(f"#define {name} {value}\n" for name, value in defines.items())
    source += (ROOT / "tests/support/tma_box_copy.cu").read_text()
    major, minor = torch.cuda.get_device_capability()
    code = compile_cubin(source, f"sm_{major}{minor}")
    artifact.content_hash = hashlib.sha256(code).hexdigest()
    artifact.code_bytes = len(code)
    torch.cuda.init()
    torch.empty(1, device="cuda")  # makes the device's primary context current
    return tiletune.Kernel(artifact, code, None)


@pytest.fixture(scope="module")
def kernel(served):
    return served.cuda("cuda:0", allow_unsigned=True)


def problem(seed):
    """a (random bf16 bits, none zero), b, and c inside a poisoned buffer."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    bits = torch.randint(1, 1 << 15, (3, 37, 200), generator=g, device="cuda", dtype=torch.int16)
    a = bits.view(torch.bfloat16)
    b = torch.zeros((3, 200, 200), device="cuda", dtype=torch.bfloat16)
    buffer = torch.full((a.numel() + GUARD,), POISON, device="cuda", dtype=torch.int16)
    c = buffer[:a.numel()].view(torch.bfloat16).view(3, 37, 200)
    return a, b, c, buffer


def check(a, buffer):
    torch.cuda.synchronize()
    n = a.numel()
    assert torch.equal(buffer[:n].view(3, 37, 200), a.view(torch.int16))
    assert bool((buffer[n:] == POISON).all()), "written past c"


def test_launch_encodes_the_map_of_each_calls_tensor(kernel):
    for seed in (1, 2):
        a, b, c, buffer = problem(seed)
        kernel.launch(torch.cuda.current_stream().cuda_stream, a=a, b=b, c=c)
        check(a, buffer)


def test_bound_launches_encode_it_too(kernel):
    launch = kernel.bind(["a", "b", "c"])
    for seed in (3, 4):
        a, b, c, buffer = problem(seed)
        launch(torch.cuda.current_stream().cuda_stream, [a.data_ptr(), b.data_ptr(), c.data_ptr()])
        check(a, buffer)


@pytest.mark.parametrize("prepared_launches", [0, 1, 64])
def test_a_bound_launch_prepared_before_runs_on_its_own_tensors(served, prepared_launches):
    # Two problems in turn, their inputs rewritten and c poisoned again each
    # time: a launch packed for one must never run on the other's tensors
    # (with one prepared launch kept, each call evicts the other's).
    kernel = served.cuda("cuda:0", allow_unsigned=True, prepared_launches=prepared_launches)
    launch = kernel.bind(["a", "b", "c"])
    problems = [problem(seed) for seed in (6, 7)]
    for round in range(3):
        for i, (a, b, c, buffer) in enumerate(problems):
            a.copy_(problem(10 * round + i + 8)[0])
            buffer.fill_(POISON)
            launch(torch.cuda.current_stream().cuda_stream,
                   [a.data_ptr(), b.data_ptr(), c.data_ptr()])
            check(a, buffer)


def test_a_tensor_the_map_cannot_take_is_refused_and_nothing_runs(kernel):
    a, b, c, buffer = problem(5)
    launch = kernel.bind(["a", "b", "c"])
    with pytest.raises(LaunchError, match="is not aligned to 16 bytes"):
        launch(0, [a.data_ptr() + 8, b.data_ptr(), c.data_ptr()])
    with pytest.raises(LaunchError, match="^a: the kernel reads this tensor through a tensor map"):
        launch(0, [0, b.data_ptr(), c.data_ptr()])
    torch.cuda.synchronize()
    assert bool((buffer == POISON).all())

"""Runs a CUDA kernel (KernelArtifact.FORMAT_CUBIN) in this process: the
CUBIN is loaded into the caller's current CUDA context through the driver
API (libcuda with ctypes: no toolkit needed) and launched on the caller's
stream with the op's struct packed from the artifact's ABI, by value."""

import ctypes
import threading

from tiletune import tensor_views
from tiletune.launch_abi import ArgumentPacker, check_loadable
from tiletune.v1 import artifacts_pb2

_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
# Dynamic shared memory a kernel gets without opting in.
_DEFAULT_DYNAMIC_SHARED_BYTES = 48 * 1024


class CudaError(RuntimeError):
    """A driver call that failed, named with the driver's error."""


class _Driver:
    """The few driver entry points a launch needs, opened once."""

    _lock = threading.Lock()
    _instance = None

    @classmethod
    def get(cls):
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CudaError(f"libcuda.so.1 cannot be loaded: {e}") from None
        self.check("cuInit", 0)

    def check(self, name, *args):
        self.raise_for(getattr(self.lib, name)(*args), name)

    def raise_for(self, result, call):
        """Raises CudaError naming `call` and the driver's error, unless
        `result` is CUDA_SUCCESS."""
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(text))
            raise CudaError(f"{call} failed: {(text.value or b'CUresult %d' % result).decode()}")


def current_context():
    """The calling thread's CUDA context (torch makes its device's primary
    context current), as an integer handle."""
    driver = _Driver.get()
    context = ctypes.c_void_p()
    driver.check("cuCtxGetCurrent", ctypes.byref(context))
    if not context.value:
        raise CudaError("no CUDA context is current on this thread: initialize CUDA first "
                        "(e.g. torch.cuda.init() and use the device)")
    return context.value


class CudaKernel:
    """A served CUBIN, loaded into the current context. launch(stream,
    **tensors, chain=[...], scalars=[...], **floats) packs the struct,
    checks every tensor (device, dtype, size, density, alignment) and queues
    the kernel on `stream` (a CUstream handle as an integer; 0 is the legacy
    default stream). One CudaKernel per context: modules belong to one."""

    def __init__(self, kernel, device):
        artifact = kernel.artifact
        check_loadable(artifact, artifacts_pb2.KernelArtifact.FORMAT_CUBIN,
                       artifacts_pb2.KernelAbi.PASSING_BY_VALUE, "a CUBIN")
        self.artifact = artifact
        self.context = current_context()
        self._packer = ArgumentPacker(artifact.abi, tensor_views.view, device,
                                      tensor_views.dtype_name)
        driver = self._driver = _Driver.get()
        self._module = ctypes.c_void_p()
        image = ctypes.create_string_buffer(kernel.code, len(kernel.code))
        driver.check("cuModuleLoadData", ctypes.byref(self._module), image)
        self._function = ctypes.c_void_p()
        driver.check("cuModuleGetFunction", ctypes.byref(self._function), self._module,
                     artifact.entry.encode())
        launch = artifact.launch
        self._shared = int(launch.shared_memory_bytes)
        if self._shared > _DEFAULT_DYNAMIC_SHARED_BYTES:
            driver.check("cuFuncSetAttribute", self._function,
                         _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self._shared)
        grid = list(launch.grid) + [1] * (3 - len(launch.grid))
        if launch.blocks_per_compute_unit > 0:
            grid[0] = min(grid[0], launch.blocks_per_compute_unit * self._compute_units())
        self._grid = grid
        self._block = list(launch.block) + [1] * (3 - len(launch.block))
        self._launch = driver.lib.cuLaunchKernel
        self._launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        self._geometry = (self._function, *self._grid, *self._block, self._shared)
        self._bound = {}

    def _compute_units(self):
        device, count = ctypes.c_int(), ctypes.c_int()
        self._driver.check("cuCtxGetDevice", ctypes.byref(device))
        self._driver.check("cuDeviceGetAttribute", ctypes.byref(count),
                           _CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)
        return count.value

    def launch(self, stream=0, chain=(), scalars=(), **named):
        self._enqueue(stream, self._packer.pack(named, chain, scalars))

    def bind(self, tensors, floats=()):
        """launch_bound(stream, addresses, floats) for callers that checked
        their tensors themselves (ArgumentPacker.bind): the hot path of
        tiletune.torch. Cached per argument list."""
        key = (tuple(tensors), tuple(floats))
        bound = self._bound.get(key)
        if bound is None:
            bound = self._bound[key] = self._packer.bind(tensors, floats)
        return lambda stream, addresses, values=(): self._enqueue(
            stream, bound.pack(addresses, values))

    def _enqueue(self, stream, blob):
        args = ctypes.create_string_buffer(bytes(blob), len(blob))
        params = (ctypes.c_void_p * 1)(ctypes.addressof(args))
        # cuLaunchKernel copies the struct: `args` may go once it returns.
        self._driver.raise_for(self._launch(*self._geometry, stream, params, None),
                               f"cuLaunchKernel({self.artifact.entry})")

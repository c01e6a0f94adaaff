"""Runs a CUDA kernel (KernelArtifact.FORMAT_CUBIN) in this process: the
CUBIN is loaded into the caller's current CUDA context through the driver
API (libcuda with ctypes: no toolkit needed) and launched on the caller's
stream with the op's struct packed from the artifact's ABI, by value, and
a TMA kernel's tensor maps encoded after it (cuTensorMapEncodeTiled)."""

import ctypes
import struct
import threading

from tiletune import tensor_views
from tiletune.launch_abi import (TENSOR_MAP_BYTES, ArgumentPacker, LaunchError, check_loadable,
                                 plan_tensor_maps)
from tiletune.v1 import artifacts_pb2

_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
# Dynamic shared memory a kernel gets without opting in.
_DEFAULT_DYNAMIC_SHARED_BYTES = 48 * 1024
# What every tensor map is encoded with: no interleave, element strides 1,
# L2 promotion of 256 bytes, zeros past the tensor's edges.
_CU_TENSOR_MAP_INTERLEAVE_NONE = 0
_CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3
_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0
_TENSOR_MAP_ALIGNMENT = 64  # where the driver writes a map
_TENSOR_ADDRESS_ALIGNMENT = 16
# Launch arguments kept packed per bound argument list (CudaKernel.bind):
# a decode step calls a kernel with its layers' weights and the activation
# buffers torch's caching allocator hands out again, so a few dozen address
# lists recur; past this many the oldest is dropped.
PREPARED_LAUNCHES = 64


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
        u32, u64 = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
        self.encode_tiled = self.lib.cuTensorMapEncodeTiled
        self.encode_tiled.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32,
                                      ctypes.c_void_p, u64, u64, u32, u32, ctypes.c_int,
                                      ctypes.c_int, ctypes.c_int, ctypes.c_int]

    def error_name(self, result):
        text = ctypes.c_char_p()
        self.lib.cuGetErrorName(result, ctypes.byref(text))
        return (text.value or b"CUresult %d" % result).decode()

    def check(self, name, *args):
        self.raise_for(getattr(self.lib, name)(*args), name)

    def raise_for(self, result, call):
        """Raises CudaError naming `call` and the driver's error, unless
        `result` is CUDA_SUCCESS."""
        if result != 0:
            raise CudaError(f"{call} failed: {self.error_name(result)}")


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


class _TensorMapEncoder:
    """A kernel's planned tensor maps (launch_abi.plan_tensor_maps) encoded
    into its packed argument at each launch, for the addresses the struct
    holds: a map holds its tensor's address."""

    def __init__(self, driver, plan, argument_bytes):
        self._driver, self._argument_bytes = driver, argument_bytes
        ones = (ctypes.c_uint32 * 3)(1, 1, 1)
        self._maps = [(m, (ctypes.c_uint64 * 3)(*m.dims), (ctypes.c_uint64 * 2)(*m.strides),
                       (ctypes.c_uint32 * 3)(*m.box), ones) for m in plan]

    def encode(self, blob):
        blob = bytearray(blob)
        blob += bytes(self._argument_bytes - len(blob))
        # The driver writes at a 64-byte boundary; one scratch map per call,
        # so that launches from several threads do not share it.
        scratch = ctypes.create_string_buffer(TENSOR_MAP_BYTES + _TENSOR_MAP_ALIGNMENT)
        at = -ctypes.addressof(scratch) % _TENSOR_MAP_ALIGNMENT + ctypes.addressof(scratch)
        for m, dims, strides, box, ones in self._maps:
            address = struct.unpack_from("P", blob, m.field_offset)[0]
            if not address:
                raise LaunchError(f"{m.tensor}: the kernel reads this tensor through a tensor "
                                  "map; none given")
            if address % _TENSOR_ADDRESS_ALIGNMENT:
                raise LaunchError(f"{m.tensor}: address {address:#x} is not aligned to 16 bytes, "
                                  "as a tensor map's must be")
            result = self._driver.encode_tiled(
                at, m.data_type, 3, address, dims, strides, box, ones,
                _CU_TENSOR_MAP_INTERLEAVE_NONE, m.swizzle, _CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                _CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
            if result != 0:
                raise LaunchError(f"{m.tensor}: cuTensorMapEncodeTiled failed: "
                                  + self._driver.error_name(result))
            blob[m.offset:m.offset + TENSOR_MAP_BYTES] = ctypes.string_at(at, TENSOR_MAP_BYTES)
        return blob


class CudaKernel:
    """A served CUBIN, loaded into the current context. launch(stream,
    **tensors, chain=[...], scalars=[...], **floats) packs the struct,
    checks every tensor (device, dtype, size, density, alignment), encodes
    the tensor maps a TMA kernel reads and queues the kernel on `stream` (a
    CUstream handle as an integer; 0 is the legacy default stream). One
    CudaKernel per context: modules belong to one."""

    def __init__(self, kernel, device, prepared_launches=PREPARED_LAUNCHES):
        if prepared_launches < 0:
            raise ValueError(f"prepared_launches: {prepared_launches}; 0 or more")
        artifact = kernel.artifact
        check_loadable(artifact, artifacts_pb2.KernelArtifact.FORMAT_CUBIN,
                       artifacts_pb2.KernelAbi.PASSING_BY_VALUE, "a CUBIN")
        tensor_maps = plan_tensor_maps(artifact.launch, artifact.abi)
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
        self._prepared_launches = prepared_launches
        self._tensor_maps = _TensorMapEncoder(driver, tensor_maps, int(launch.argument_bytes)) \
            if tensor_maps else None

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
        tiletune.torch. One per argument list; it keeps the packed argument
        (tensor maps encoded) of the last `prepared_launches` address and
        float lists, so a recurring call is one driver call."""
        key = (tuple(tensors), tuple(floats))
        launch_bound = self._bound.get(key)
        if launch_bound is None:
            launch_bound = self._bound[key] = self._prepared(self._packer.bind(tensors, floats))
        return launch_bound

    def _prepared(self, bound):
        prepared, lock = {}, threading.Lock()
        capacity = self._prepared_launches

        def launch_bound(stream, addresses, values=()):
            key = (tuple(addresses), tuple(values))
            params = prepared.get(key)
            if params is None:
                params = self._params(bound.pack(addresses, values))
                with lock:  # dicts keep insertion order: the first key is the oldest
                    while prepared and len(prepared) >= capacity:
                        del prepared[next(iter(prepared))]
                    if capacity:
                        prepared[key] = params
            self._launch_params(stream, params)
        return launch_bound

    def _params(self, blob):
        """cuLaunchKernel's kernelParams for the packed `blob` (tensor maps
        encoded), with the buffer they point at: the driver copies the
        argument at launch, so one buffer serves any number of launches."""
        if self._tensor_maps:
            blob = self._tensor_maps.encode(blob)
        args = ctypes.create_string_buffer(bytes(blob), len(blob))
        return (ctypes.c_void_p * 1)(ctypes.addressof(args)), args

    def _enqueue(self, stream, blob):
        self._launch_params(stream, self._params(blob))

    def _launch_params(self, stream, params):
        result = self._launch(*self._geometry, stream, params[0], None)
        if result:
            self._driver.raise_for(result, f"cuLaunchKernel({self.artifact.entry})")

"""Builds the tiletune package with its tiletune.v1 protobuf and gRPC modules,
generated from the repository's proto/ folder at build time (protoc and
grpc_python_plugin: Debian's protobuf-compiler and protobuf-compiler-grpc).
Metadata is in pyproject.toml."""

import pathlib
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import ExecError, FileError

PROTO_DIR = pathlib.Path(__file__).resolve().parent.parent.parent / "proto"
# The same list proto/CMakeLists.txt and client/python/CMakeLists.txt read.
PROTO_LIST = PROTO_DIR / "public-protos.txt"


def public_protos():
    if not PROTO_LIST.is_file():
        raise FileError(f"{PROTO_LIST} not found: build the package from a tiletune source tree "
                        "(pip install client/python)")
    lines = (line.strip() for line in PROTO_LIST.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def program(name, package):
    path = shutil.which(name)
    if path is None:
        raise ExecError(f"{name} not found in PATH: it generates tiletune.v1 from proto/ "
                        f"(Debian: apt-get install {package})")
    return path


class BuildPyWithProtos(build_py):
    """build_py, then protoc writes tiletune/v1/*_pb2.py and *_pb2_grpc.py
    into the build folder."""

    def run(self):
        super().run()
        protos = public_protos()
        protoc = program("protoc", "protobuf-compiler")
        plugin = program("grpc_python_plugin", "protobuf-compiler-grpc")
        package_dir = pathlib.Path(self.build_lib) / "tiletune" / "v1"
        package_dir.mkdir(parents=True, exist_ok=True)
        (package_dir / "__init__.py").touch()
        self.spawn([protoc, f"-I{PROTO_DIR}", f"--python_out={self.build_lib}",
                    f"--grpc_out={self.build_lib}", f"--plugin=protoc-gen-grpc={plugin}",
                    *(str(PROTO_DIR / proto) for proto in protos)])


setup(cmdclass={"build_py": BuildPyWithProtos})

#pragma once

#include <string>

#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime::host {

// The fingerprint of the CPU this process runs on: arch is the machine plus
// the vector ISA that -march=native enables here ("x86_64-avx512"), name the
// model from /proc/cpuinfo, compute units the hardware threads this process
// may run on (UsableCpuCount), memory from /proc/meminfo, L2 from sysfs when
// present.
v1::DeviceFingerprint ReadCpuFingerprint();

// The hardware threads this process may run on: its CPU affinity, which a
// container's cpuset or tiletuned's host_cpus narrows, not every CPU online.
int UsableCpuCount();

// "x86_64-avx512", "x86_64-avx2", "x86_64-sse2", or the bare machine name
// on other architectures.
std::string CpuArch();

}  // namespace tiletune::runtime::host

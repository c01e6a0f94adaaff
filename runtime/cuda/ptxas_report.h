#pragma once

#include <string_view>

#include "runtime/backend.h"

namespace tiletune::runtime::cuda {

// The resources of kernel `entry` from the ptxas report (--ptxas-options=-v)
// in an NVRTC log:
//
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas info    : Function properties for k
//   ptxas         .     576 bytes stack frame, 1316 bytes spill stores, 1396 bytes spill loads
//   ptxas info    : Used 24 registers, used 0 barriers, 576 bytes cumulative stack size, 1024 bytes
//   smem
//
// registers and shared memory are the entry's; stack is the larger of its
// frame and its cumulative stack (callees included); spills are the entry's
// plus those of every non-entry function in the log (the device functions it
// calls). With no report for `entry` (or an empty one), the largest figures
// of all entries in the log. An empty report when the log has none.
ResourceReport ParsePtxasReport(std::string_view log, std::string_view entry);

}  // namespace tiletune::runtime::cuda

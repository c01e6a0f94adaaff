#pragma once

#include <string>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels {

// How a backend's kernels spell the generated epilogue functor: the struct
// of arguments it reads chain tensors and scalars from, the index type, and
// what its call operator needs in front (__device__ on GPUs).
struct EpilogueDialect {
  std::string args_type;   // the op's LaunchAbi struct: tt_gemm_args...
  std::string index_type;  // int64_t, long long
  std::string qualifier;   // "", "__device__ "
};

// The source of `struct Epilogue`: holds `const <args_type>* args` and maps
// (v, idx, col) through the key's chain ops (tt::bias, tt::scale, ... of the
// backend's epilogue ops: tt/epilogue.h, tt/host/epilogue.h) in chain order. `plant_wrong_result`
// appends a step that adds 1 to every value (planted fault 3 of kPlantedFault). The chain's runtime
// arguments follow the prologue's in args->chain, and `empty` says whether the functor does
// anything.
std::string EpilogueFunctor(const v1::KernelKey& key, const EpilogueDialect& dialect,
                            bool plant_wrong_result = false);

// The source of `struct Prologue`: the key's prologue ops, applied to the
// kernel's input values, in the same form (their arguments come first in
// args->chain).
std::string PrologueFunctor(const v1::KernelKey& key, const EpilogueDialect& dialect);

}  // namespace tiletune::kernels

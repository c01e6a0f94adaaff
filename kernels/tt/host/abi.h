// What a generated host kernel exports. Its argument is the op's launch ABI
// struct (kernels/ops/<op>/<op>_args.h), the same one the GPU kernels take;
// host kernels read and write every tensor in f32.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Every generated kernel exports one entry of this type, called with a
// pointer to its op's argument struct; 0 means success.
typedef int (*tt_host_entry)(const void* args);

#ifdef __cplusplus
}
#define TT_EXPORT extern "C" __attribute__((visibility("default")))

namespace tt {

// A tensor field of an argument struct as the f32 elements host kernels use.
inline const float* floats(const void* p) {
  return static_cast<const float*>(p);
}
inline float* floats(void* p) {
  return static_cast<float*>(p);
}

}  // namespace tt
#endif

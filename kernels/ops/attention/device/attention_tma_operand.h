// Where one head's [seq][head_dim] matrix of an attention operand sits in
// its rank-3 tensor map (inner, rows, batch), the form the launcher encodes
// (docs/kernel-abi.md, "TMA kernels"): rows are always the sequence, so
// zeros arrive past seq. BHSD [batch][heads][seq][head_dim]: inner =
// head_dim, batch entries = batch x heads. BSHD [batch][seq][heads *
// head_dim]: inner = heads x head_dim, a head's columns start at head x
// head_dim, batch entries = batch.
#ifndef TILETUNE_TT_ATTENTION_TMA_OPERAND_H
#define TILETUNE_TT_ATTENTION_TMA_OPERAND_H

#include "tt/device.h"

namespace tt::attention {

struct head_in_map {
  int col0;   // the head's first column
  int entry;  // its batch entry
};

template <bool Bshd>
TT_DEVICE head_in_map locate_head(long long batch, long long head, long long heads,
                                  long long head_dim) {
  if constexpr (Bshd) {
    return {static_cast<int>(head * head_dim), static_cast<int>(batch)};
  } else {
    return {0, static_cast<int>(batch * heads + head)};
  }
}

}  // namespace tt::attention

#endif

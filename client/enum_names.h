#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::client {

// Short lower-case names for proto enum values, derived from the value names
// so the wire contract stays the only list: with prefix "DTYPE_", DTYPE_BF16
// is "bf16"; with prefix "LAYOUT_" and suffix "_MAJOR", LAYOUT_COL_MAJOR is
// "col". The *_UNSPECIFIED value has no short name.
struct EnumNaming {
  const google::protobuf::EnumDescriptor* descriptor;
  std::string_view prefix;
  std::string_view suffix = "";
};

// The short name of `value`; "unspecified" for 0 and "?" for a number the
// descriptor does not know (a newer daemon).
std::string ShortEnumName(const EnumNaming& naming, int value);

// The value whose short name is `name`; nullopt for unknown names.
std::optional<int> ParseShortEnumName(const EnumNaming& naming, std::string_view name);

// All short names in declaration order, and the same as "f32, f16, bf16, f64"
// for error messages and help text.
std::vector<std::string> ShortEnumNames(const EnumNaming& naming);
std::string ShortEnumNameList(const EnumNaming& naming);

// The spellings used in job files, flags and human output.
inline const EnumNaming kDTypeNaming{v1::DType_descriptor(), "DTYPE_"};               // f32, bf16
inline const EnumNaming kLayoutNaming{v1::Layout_descriptor(), "LAYOUT_", "_MAJOR"};  // row
inline const EnumNaming kStrategyNaming{v1::Strategy_descriptor(), "STRATEGY_"};      // random
// attention keys: none, causal, tensor; bshd, bhsd (their 0 values have names).
inline const EnumNaming kAttentionMaskNaming{v1::AttentionMask_descriptor(), "ATTENTION_MASK_"};
inline const EnumNaming kGateNaming{v1::Gate_descriptor(), "GATE_"};
inline const EnumNaming kSequenceLayoutNaming{v1::SequenceLayout_descriptor(), "SEQUENCE_LAYOUT_"};
inline const EnumNaming kJobStateNaming{v1::JobState_descriptor(), "JOB_"};            // queued
inline const EnumNaming kWinnerNaming{v1::Winner_descriptor(), "WINNER_"};             // tuned
inline const EnumNaming kTrialStatusNaming{v1::TrialStatus_descriptor(), "TRIAL_"};    // crash
inline const EnumNaming kDeviceStateNaming{v1::Device::State_descriptor(), "STATE_"};  // busy
// TRUST_MEASURED is 0: spell it with TrustName (client/cli/record_format.h).
inline const EnumNaming kTrustNaming{v1::Trust_descriptor(), "TRUST_"};  // unverified

}  // namespace tiletune::client

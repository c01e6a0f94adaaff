#pragma once

#include <string>

#include <google/protobuf/message.h>

namespace tiletune::cli {

enum class JsonDefaults {
  kInclude,  // every field present, so scripts see a stable shape
  kOmit,     // only fields that are set: compact export files
};

// `message` as one line of JSON with the proto field names (snake_case).
std::string ToJson(const google::protobuf::Message& message,
                   JsonDefaults defaults = JsonDefaults::kInclude);

// ToJson on stdout, one message per line (JSON Lines for streams).
void PrintJson(const google::protobuf::Message& message);

}  // namespace tiletune::cli

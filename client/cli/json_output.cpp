#include "client/cli/json_output.h"

#include <iostream>
#include <stdexcept>

#include <google/protobuf/util/json_util.h>

namespace tiletune::cli {

std::string ToJson(const google::protobuf::Message& message, JsonDefaults defaults) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = defaults == JsonDefaults::kInclude;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    throw std::runtime_error("cannot write " + message.GetTypeName() +
                             " as JSON: " + std::string(status.message()));
  }
  return json;
}

void PrintJson(const google::protobuf::Message& message) {
  std::cout << ToJson(message) << '\n' << std::flush;
}

}  // namespace tiletune::cli

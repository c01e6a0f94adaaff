// The free text and numbers of whole messages: every string (double)
// field, nested messages, repeated entries and map entries included. What a
// request may bring in (ImportRecords' records) and what an answer may carry
// out (list pages).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/message.h>

#include "kernels/core/kernel_key.h"

namespace tiletune::server {

// The first string of `message` longer than `max_bytes`, the setting named
// `limit`, as an error naming its path under `prefix`
// ("record.decision.reason").
std::optional<kernels::FieldError> FindLongText(const google::protobuf::Message& message,
                                                std::size_t max_bytes, std::string_view limit,
                                                const std::string& prefix);

// The first double of `message` that is NaN or infinite, as an error naming
// its path under `prefix`: JSON parses "NaN" and "Infinity" into any double.
std::optional<kernels::FieldError> FindNonFiniteNumber(const google::protobuf::Message& message,
                                                       const std::string& prefix);

// Cuts every string of `message` longer than `max_bytes`
// (kernels::Abbreviated).
void TruncateLongText(google::protobuf::Message& message, std::size_t max_bytes);

}  // namespace tiletune::server

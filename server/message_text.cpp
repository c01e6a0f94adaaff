#include "server/message_text.h"

#include <cmath>
#include <vector>

namespace tiletune::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

const Message& SubMessage(const Message& message, const FieldDescriptor* field, int index) {
  const auto* reflection = message.GetReflection();
  return index < 0 ? reflection->GetMessage(message, field)
                   : reflection->GetRepeatedMessage(message, field, index);
}

Message& SubMessage(Message& message, const FieldDescriptor* field, int index) {
  const auto* reflection = message.GetReflection();
  return index < 0 ? *reflection->MutableMessage(&message, field)
                   : *reflection->MutableRepeatedMessage(&message, field, index);
}

std::string StringAt(const Message& message, const FieldDescriptor* field, int index) {
  const auto* reflection = message.GetReflection();
  return index < 0 ? reflection->GetString(message, field)
                   : reflection->GetRepeatedString(message, field, index);
}

// Calls `on_field(path, message, field, index)` for every field of
// `message` that is set and of proto type `type` (index -1 when it is not
// repeated) and recurses into its messages, maps being repeated entry
// messages. Stops, returning false, at the first call that returns false.
// `M` is Message or const Message.
template <typename M, typename OnField>
bool ForEachField(M& message, FieldDescriptor::Type type, const std::string& path,
                  const OnField& on_field) {
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const bool wanted = field->type() == type;
    if (!wanted && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string at = path.empty() ? field->name() : path + "." + field->name();
    const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      const int index = field->is_repeated() ? i : -1;
      const std::string item = index < 0 ? at : at + "[" + std::to_string(i) + "]";
      const bool go_on =
          wanted ? on_field(item, message, field, index)
                 : ForEachField(SubMessage(message, field, index), type, item, on_field);
      if (!go_on) return false;
    }
  }
  return true;
}

template <typename M, typename OnString>
bool ForEachString(M& message, const std::string& path, const OnString& on_string) {
  return ForEachField(message, FieldDescriptor::TYPE_STRING, path, on_string);
}

double DoubleAt(const Message& message, const FieldDescriptor* field, int index) {
  const auto* reflection = message.GetReflection();
  return index < 0 ? reflection->GetDouble(message, field)
                   : reflection->GetRepeatedDouble(message, field, index);
}

}  // namespace

std::optional<kernels::FieldError> FindLongText(const Message& message, std::size_t max_bytes,
                                                std::string_view limit, const std::string& prefix) {
  std::optional<kernels::FieldError> error;
  ForEachString(
      message, prefix,
      [&](const std::string& path, const Message& m, const FieldDescriptor* field, int index) {
        error = kernels::CheckLength(StringAt(m, field, index), static_cast<int64_t>(max_bytes),
                                     limit, path);
        return !error;
      });
  return error;
}

std::optional<kernels::FieldError> FindNonFiniteNumber(const Message& message,
                                                       const std::string& prefix) {
  std::optional<kernels::FieldError> error;
  ForEachField(
      message, FieldDescriptor::TYPE_DOUBLE, prefix,
      [&](const std::string& path, const Message& m, const FieldDescriptor* field, int index) {
        const double value = DoubleAt(m, field, index);
        if (!std::isfinite(value)) {
          error = kernels::FieldError{path, std::string("is ") +
                                                (std::isnan(value) ? "NaN" : "infinite") +
                                                "; must be a finite number"};
        }
        return !error;
      });
  return error;
}

void TruncateLongText(Message& message, std::size_t max_bytes) {
  ForEachString(
      message, "", [&](const std::string&, Message& m, const FieldDescriptor* field, int index) {
        const std::string value = StringAt(m, field, index);
        if (value.size() <= max_bytes) return true;
        const auto* reflection = m.GetReflection();
        if (index < 0) {
          reflection->SetString(&m, field, kernels::Abbreviated(value, max_bytes));
        } else {
          reflection->SetRepeatedString(&m, field, index, kernels::Abbreviated(value, max_bytes));
        }
        return true;
      });
}

}  // namespace tiletune::server

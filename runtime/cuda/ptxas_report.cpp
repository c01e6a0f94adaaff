#include "runtime/cuda/ptxas_report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace tiletune::runtime::cuda {
namespace {

// The number written just before `suffix` in `line` ("576" in "576 bytes
// stack frame"); nullopt when `suffix` is absent or has no number before it.
std::optional<int64_t> NumberBefore(std::string_view line, std::string_view suffix) {
  const size_t at = line.find(suffix);
  if (at == std::string_view::npos) return std::nullopt;
  size_t begin = at;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == at) return std::nullopt;
  return std::stoll(std::string(line.substr(begin, at - begin)));
}

// The number written just after `prefix` ("24" in "Used 24 registers").
std::optional<int64_t> NumberAfter(std::string_view line, std::string_view prefix) {
  const size_t at = line.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = at + prefix.size();
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  if (end == at + prefix.size()) return std::nullopt;
  return std::stoll(std::string(line.substr(at + prefix.size(), end - at - prefix.size())));
}

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// What the report says about one function.
struct FunctionReport {
  ResourceReport resources;
  int64_t frame_bytes = 0;
};

}  // namespace

ResourceReport ParsePtxasReport(std::string_view log, std::string_view entry) {
  std::map<std::string, FunctionReport, std::less<>> functions;
  std::set<std::string, std::less<>> entries;
  std::string compiling, described;  // the entry being compiled; the function described
  constexpr std::string_view kEntry = "Compiling entry function '";
  constexpr std::string_view kProperties = "Function properties for ";

  for (size_t begin = 0; begin < log.size();) {
    const size_t end = std::min(log.find('\n', begin), log.size());
    const std::string_view line = log.substr(begin, end - begin);
    begin = end + 1;
    if (const size_t at = line.find(kEntry); at != std::string_view::npos) {
      const std::string_view rest = line.substr(at + kEntry.size());
      compiling = std::string(rest.substr(0, rest.find('\'')));
      entries.insert(compiling);
    } else if (const size_t p = line.find(kProperties); p != std::string_view::npos) {
      described = std::string(Trim(line.substr(p + kProperties.size())));
    } else if (line.find("bytes stack frame") != std::string_view::npos) {
      FunctionReport& f = functions[described];
      f.frame_bytes = NumberBefore(line, " bytes stack frame").value_or(0);
      f.resources.spill_bytes = NumberBefore(line, " bytes spill stores").value_or(0) +
                                NumberBefore(line, " bytes spill loads").value_or(0);
    } else if (const auto registers = NumberAfter(line, "Used ")) {
      ResourceReport& r = functions[compiling].resources;
      r.registers = static_cast<int>(*registers);
      r.shared_memory_bytes = NumberBefore(line, " bytes smem").value_or(0);
      r.stack_bytes = NumberBefore(line, " bytes cumulative stack size").value_or(0);
    }
  }

  int64_t callee_spills = 0;
  for (const auto& [name, f] : functions) {
    if (!entries.contains(name)) callee_spills += f.resources.spill_bytes;
  }
  const auto entry_report = [&](const std::string& name) {
    const FunctionReport& f = functions[name];
    ResourceReport r = f.resources;
    r.stack_bytes = std::max(r.stack_bytes, f.frame_bytes);
    r.spill_bytes += callee_spills;
    return r;
  };
  if (entries.contains(entry)) return entry_report(std::string(entry));
  ResourceReport largest;
  for (const auto& name : entries) {
    const ResourceReport r = entry_report(name);
    largest.registers = std::max(largest.registers, r.registers);
    largest.shared_memory_bytes = std::max(largest.shared_memory_bytes, r.shared_memory_bytes);
    largest.spill_bytes = std::max(largest.spill_bytes, r.spill_bytes);
    largest.stack_bytes = std::max(largest.stack_bytes, r.stack_bytes);
  }
  return largest;
}

}  // namespace tiletune::runtime::cuda

#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tiletune::testing {

// Each of `parts` appears in `code`, one after another in this order (a
// generated kernel's chain steps, say).
inline void ExpectInOrder(const std::string& code, const std::vector<std::string>& parts) {
  size_t at = 0;
  for (const std::string& part : parts) {
    const size_t found = code.find(part, at);
    ASSERT_NE(found, std::string::npos) << "'" << part << "' missing or out of order in:\n" << code;
    at = found + part.size();
  }
}

}  // namespace tiletune::testing

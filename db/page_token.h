#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tiletune::db {

// Paging cursors handed to clients: the sort key of the last row of a page,
// as an opaque hex string. The next page starts after that key, so rows
// added or removed between pages neither repeat nor shift the others.
std::string EncodePageToken(const std::vector<std::string>& sort_key);

// The sort key in a token from EncodePageToken with `fields` fields. Throws
// InvalidPageToken (db/tuning_store.h) for anything else.
std::vector<std::string> DecodePageToken(const std::string& token, std::size_t fields);

// A numeric field of a decoded sort key; throws like DecodePageToken.
int64_t PageTokenInt(const std::string& field);

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;

// page_size <= 0 means kDefaultPageSize; larger than kMaxPageSize means
// kMaxPageSize.
int EffectivePageSize(int requested);

}  // namespace tiletune::db

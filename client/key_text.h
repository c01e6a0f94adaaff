#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/enum_names.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::client {

// Text forms of kernel-key parts, shared by `tiletune lookup` flags and job
// spec files so both accept exactly the same spellings. Only syntax is checked
// here: which ops, dims and chains make sense is the daemon's call.

// f32, f16, bf16, f64 and row, col (kDTypeNaming, kLayoutNaming).
std::optional<v1::DType> ParseDTypeName(std::string_view name);
std::optional<v1::Layout> ParseLayoutName(std::string_view name);

// Whole-text decimal numbers: "12x", "", "+1" and " 1" are not numbers.
std::optional<int64_t> ParseInteger(std::string_view text);
// Finite only: a scale of "inf" is a typo, not a request.
std::optional<double> ParseNumber(std::string_view text);

// Throws InputError unless `name` is lower-case letters, digits and '_'.
void CheckOpNameSyntax(std::string_view name);

// One chain entry: "bias", "scale=0.5" (a number sets the scalar) or
// "cast=bf16" (a dtype name sets the dtype). Throws InputError whose message
// quotes the entry but names no field; callers add where it came from.
v1::ChainOp ParseChainEntry(std::string_view text);

// Comma lists as given to `tiletune lookup`. Throw InputError starting with
// `flag` ("--shape: ...").
std::vector<v1::Dim> ParseShapeText(std::string_view text, std::string_view flag);  // m=128,n=64
std::vector<v1::TensorLayout> ParseLayoutsText(std::string_view text,
                                               std::string_view flag);  // a=row,b=col
std::vector<v1::ChainOp> ParseChainText(std::string_view text,
                                        std::string_view flag);  // bias,scale=0.5

// A key in the same syntax, for display:
// "gemm f32->f32 m=128,n=256,k=64 a=row,b=col chain=bias,scale=0.5"; " tf32"
// follows the dtypes when the key allows it.
std::string KeyText(const v1::KernelKey& key);

}  // namespace tiletune::client

#pragma once

#include <cstddef>
#include <optional>
#include <ostream>

#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::cli {

// How tuning records and lookup answers look as text.

// One row per record: KEY, DEVICE CLASS, WINNER, TRUST (measured,
// unverified, trusted, verified, verify_failed), TUNED µs, BASELINE µs,
// SPEEDUP, BASELINE (its name and heuristic algorithm), TFLOP/s, % OF ROOFLINE ("unknown" without
// the device's ceilings), VALIDATED, MEASURED, STALE ("-", or "stale: <which versions differ>"),
// fitting `max_width` (TextTable::Print).
void PrintRecordsTable(const v1::ListRecordsResponse& records, std::ostream& out,
                       std::optional<size_t> max_width);

// One line per reason the listed imported records are not served (their
// provenance's verification: waiting for a verify job, verify job
// cancelled, no device of the class, ...), with how many it holds back,
// so that the table's TRUST column comes with what to do about it.
void PrintUnservedNotes(const v1::ListRecordsResponse& records, std::ostream& out);

// A record's trust in short: "measured" (the value 0), "unverified", ...
std::string TrustName(v1::Trust trust);

// `lookup`: "HIT <key>" with the config, times, speedup and where and when
// they were measured, or "MISS <key>" with the fallback (and the record, when
// the daemon knows the vendor library wins).
void PrintLookup(const v1::KernelKey& asked, const v1::LookupResponse& response, std::ostream& out);

}  // namespace tiletune::cli

#pragma once

#include <string_view>

namespace tiletune::cli {

// What `tiletune` exits with; printed at the end of `tiletune --help`.
enum ExitCode : int {
  kOk = 0,
  kServerError = 1,      // the daemon failed the request (and `health`: NOT_SERVING)
  kUsage = 2,            // bad flags, unreadable or malformed input, INVALID_ARGUMENT
  kUnreachable = 3,      // no daemon at --server, or no answer within --timeout
  kNotFound = 4,         // no such job (or health service)
  kJobUnsuccessful = 5,  // a watched job ended FAILED or CANCELLED
  kImportRejected = 6,   // `records import` rejected lines
  kDenied = 7,           // UNAUTHENTICATED or PERMISSION_DENIED: a credential is missing or wrong
  kDetached = 130,       // Ctrl-C left a watch; the job goes on (128 + SIGINT, as shells report)
};

inline constexpr std::string_view kExitCodeHelp =
    "Exit codes:\n"
    "  0  ok\n"
    "  1  server-side error (for health: NOT_SERVING)\n"
    "  2  usage or bad input (flags, malformed job file, INVALID_ARGUMENT from the server)\n"
    "  3  daemon unreachable or deadline exceeded\n"
    "  4  not found\n"
    "  5  watched job ended FAILED or CANCELLED\n"
    "  6  import had rejects (nothing imported)\n"
    "  7  not authenticated (--token-file, --tls-cert) or not allowed\n"
    "  130  Ctrl-C detached from a watched job, which keeps running\n"
    "Data goes to stdout, messages to stderr; --json makes stdout machine-readable.";

}  // namespace tiletune::cli

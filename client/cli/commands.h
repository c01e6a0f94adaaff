#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "client/cli/cli_context.h"
#include "client/cli/exit_codes.h"

namespace tiletune::cli {

// What the parsed command line asked for; runs once the global options are
// known. Failures throw CommandError (or client::InputError for bad input).
using CommandRun = std::function<ExitCode(CliContext&)>;

// Each adds its subcommand(s) to `app`; when one is given, it sets `run`.
void AddSubmitCommand(CLI::App& app, CommandRun& run);
void AddJobsCommand(CLI::App& app, CommandRun& run);
void AddLookupCommand(CLI::App& app, CommandRun& run);
void AddRecordsCommand(CLI::App& app, CommandRun& run);
void AddDevicesCommand(CLI::App& app, CommandRun& run);
void AddHealthCommand(CLI::App& app, CommandRun& run);
void AddReportCommand(CLI::App& app, CommandRun& run);

}  // namespace tiletune::cli

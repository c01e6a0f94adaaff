// tiletune: the command line for tiletuned. See exit_codes.h for what it
// exits with; every failure is one line "tiletune: <message>" on stderr.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "client/cli/command_error.h"
#include "client/cli/commands.h"
#include "client/cli/display_format.h"
#include "client/input_error.h"

namespace {

using tiletune::cli::ExitCode;

ExitCode PrintError(const std::string& message, ExitCode code) {
  std::cerr << "tiletune: " << tiletune::cli::OneLine(message) << '\n';
  return code;
}

// Edits (insertions, deletions, substitutions) from a to b.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A parse error in words a user can act on: for a missing or unknown
// command, the commands there are (and the nearest one to a typo), instead
// of CLI11's "A subcommand is required".
std::string UsageMessage(const CLI::App& app, const CLI::ParseError& error,
                         const std::vector<std::string>& words) {
  const CLI::App* command = &app;
  std::string path = "tiletune";
  std::vector<std::string> on_the_way;  // the commands the words named
  for (auto parsed = command->get_subcommands(); !parsed.empty();
       parsed = command->get_subcommands()) {
    command = parsed.front();
    path += " " + command->get_name();
    on_the_way.push_back(command->get_name());
  }
  std::vector<std::string> names;
  for (const CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  // The first word that is neither an option, an option's value nor a
  // command on the way is the typo (if any).
  std::string word;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.starts_with("-")) {
      const CLI::Option* option = app.get_option_no_throw(w.substr(0, w.find('=')));
      if (!option) option = command->get_option_no_throw(w.substr(0, w.find('=')));
      if (option && option->get_items_expected_max() > 0 && w.find('=') == std::string::npos) ++i;
      continue;
    }
    if (std::find(on_the_way.begin(), on_the_way.end(), w) == on_the_way.end() &&
        std::find(names.begin(), names.end(), w) == names.end()) {
      word = w;
      break;
    }
  }
  const bool subcommand_error = dynamic_cast<const CLI::RequiredError*>(&error) != nullptr ||
                                dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
  if (!subcommand_error || names.empty()) return error.what();
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  const std::string commands = "commands: " + list + " (" + path + " --help)";
  if (word.empty()) return path + " needs a command; " + commands;
  std::string nearest;
  size_t best = 3;  // suggest only what is at most two edits away
  for (const std::string& name : names) {
    if (const size_t d = EditDistance(word, name); d < best) best = d, nearest = name;
  }
  return "'" + word.substr(0, 40) + "' is not a command of " + path +
         (nearest.empty() ? "" : "; did you mean '" + nearest + "'?") + "; " + commands;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tiletune::cli;

  GlobalOptions global;
  CommandRun run;
  CLI::App app("Submit tuning jobs to tiletuned and query its tuning database.", "tiletune");
  app.footer(std::string(kExitCodeHelp));
  // Global options may follow the command: `tiletune health --json`.
  app.fallthrough();
  app.require_subcommand(1);
  app.set_version_flag("--version", TILETUNE_VERSION);
  app.add_option("--server", global.server, "daemon address host:port")
      ->envname("TILETUNE_SERVER")
      ->capture_default_str();
  app.add_flag("--json", global.json,
               "machine-readable output on stdout (with --watch: JSON Lines, one event a line)");
  app.add_flag("--wide", global.wide,
               "tables with every column and every cell whole; by default they fit COLUMNS or "
               "the terminal (long cells end in …, minor columns go), and output to a pipe or "
               "file is cut only when COLUMNS is set");
  app.add_option("--timeout", global.timeout_seconds, "deadline of each call, in seconds")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const double seconds = std::strtod(text.c_str(), nullptr);
            return seconds > 0 && seconds <= 86400
                       ? ""
                       : "must be more than 0 and at most 86400 seconds, not " + text;
          },
          "SECONDS"))
      ->capture_default_str();
  app.add_flag("--tls", global.tls, "use TLS, trusting the system's CAs unless --tls-ca is given");
  app.add_option("--tls-ca", global.tls_ca_file,
                 "PEM CA of the daemon's certificate (implies --tls)")
      ->envname("TILETUNE_TLS_CA");
  app.add_option("--tls-cert", global.tls_cert_file, "PEM client certificate for mutual TLS")
      ->envname("TILETUNE_TLS_CERT");
  app.add_option("--tls-key", global.tls_key_file, "PEM key of --tls-cert")
      ->envname("TILETUNE_TLS_KEY");
  app.add_option("--token-file", global.token_file,
                 "file holding the bearer token sent with every call")
      ->envname("TILETUNE_TOKEN_FILE");
  AddSubmitCommand(app, run);
  AddJobsCommand(app, run);
  AddLookupCommand(app, run);
  AddRecordsCommand(app, run);
  AddDevicesCommand(app, run);
  AddHealthCommand(app, run);
  AddReportCommand(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version come this way too, with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    return PrintError(UsageMessage(app, e, std::vector<std::string>(argv + 1, argv + argc)),
                      kUsage);
  }

  try {
    CliContext context(global);
    return run(context);
  } catch (const CommandError& e) {
    return PrintError(e.what(), e.code());
  } catch (const tiletune::client::InputError& e) {
    return PrintError(e.what(), kUsage);
  } catch (const std::exception& e) {
    return PrintError(e.what(), kServerError);
  }
}

// tiletune: the command line for tiletuned. See exit_codes.h for what it
// exits with; every failure is one line "tiletune: <message>" on stderr.
#include <iostream>
#include <string>

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
  app.add_flag("--json", global.json, "machine-readable output on stdout");
  app.add_option("--timeout", global.timeout_seconds, "deadline of each call, in seconds")
      ->check(CLI::PositiveNumber)
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version come this way too, with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    return PrintError(e.what(), kUsage);
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

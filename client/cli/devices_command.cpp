#include <cstddef>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "client/cli/commands.h"
#include "client/cli/display_format.h"
#include "client/cli/json_output.h"
#include "client/cli/text_table.h"
#include "client/enum_names.h"

namespace tiletune::cli {
namespace {

// Every daemon sharing the tuning database, one row per device; a daemon
// whose heartbeat is too old shows as gone on each of its rows.
void PrintFleet(const v1::ListDevicesResponse& response, std::ostream& out,
                std::optional<size_t> max_width) {
  if (!response.fleet_unknown().empty()) {
    out << "\nfleet: unknown (" << response.fleet_unknown() << ")\n";
  }
  if (response.fleet().empty()) return;
  TextTable fleet({"DAEMON", "ADDRESS", "DEVICE", "CLASS", "STATE", "JOB", "HEARTBEAT"});
  fleet.CutToFit("CLASS", 12);
  fleet.CutToFit("DAEMON", 12);
  for (const auto& daemon : response.fleet()) {
    const std::string heartbeat = fmt::format("{:.1f} s ago", daemon.heartbeat_age_seconds());
    auto state = [&](const v1::Device& d) {
      return daemon.gone() ? std::string("gone")
                           : client::ShortEnumName(client::kDeviceStateNaming, d.state());
    };
    if (daemon.devices().empty()) {
      fleet.AddRow({daemon.daemon_id(), daemon.address(), "-", "-", daemon.gone() ? "gone" : "-",
                    "-", heartbeat});
    }
    for (const auto& d : daemon.devices()) {
      fleet.AddRow({daemon.daemon_id(), daemon.address(), d.id(), d.fingerprint().device_class(),
                    state(d), OrDash(d.running_job_id()), heartbeat});
    }
  }
  out << "\nfleet (daemons sharing the tuning database)\n";
  fleet.Print(out, max_width);
}

void PrintDevices(const v1::ListDevicesResponse& response, std::ostream& out,
                  std::optional<size_t> max_width) {
  out << fmt::format("daemon {} (version {}, started {})\n", response.daemon(), response.version(),
                     FormatTimestamp(response.started_at()));
  TextTable backends({"BACKEND", "AVAILABLE", "REASON"});
  backends.CutToFit("REASON", 24);
  for (const auto& b : response.backends()) {
    backends.AddRow({b.name(), b.available() ? "yes" : "no", OrDash(b.reason())});
  }
  out << '\n';
  backends.Print(out, max_width);
  TextTable devices({"DEVICE", "BACKEND", "VENDOR", "ARCH", "NAME", "UNITS", "MEMORY", "CLASS",
                     "STATE", "JOB", "RESTARTS"});
  devices.CutToFit("NAME", 12);
  devices.CutToFit("CLASS", 12);
  devices.DropToFit("RESTARTS");
  devices.DropToFit("VENDOR");
  for (const auto& d : response.devices()) {
    const auto& f = d.fingerprint();
    devices.AddRow({d.id(), d.backend(), f.vendor(), f.arch(), f.name(),
                    std::to_string(f.compute_units()), FormatBytes(f.memory_bytes()),
                    f.device_class(), client::ShortEnumName(client::kDeviceStateNaming, d.state()),
                    OrDash(d.running_job_id()), std::to_string(d.worker_restarts())});
  }
  out << '\n';
  devices.Print(out, max_width);
  PrintFleet(response, out, max_width);
}

ExitCode Devices(CliContext& context) {
  v1::ListDevicesResponse response;
  context.Check(context.tuning().ListDevices(context.CallContext().get(), v1::ListDevicesRequest(),
                                             &response));
  if (context.json()) {
    PrintJson(response);
  } else {
    PrintDevices(response, std::cout, context.table_width());
  }
  return kOk;
}

}  // namespace

void AddDevicesCommand(CLI::App& app, CommandRun& run) {
  auto* command = app.add_subcommand(
      "devices",
      "Show the backends the daemon found (and why not), its devices and the fleet's daemons");
  command->callback([&run] { run = Devices; });
}

}  // namespace tiletune::cli

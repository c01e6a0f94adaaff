// ListDevices: this daemon's backends and devices, its identity, and the
// fleet of daemons sharing its database. It answers before the database is
// open and while it is unreachable, saying why the fleet is unknown.
#include "server/fleet_view.h"
#include "server/tuning_service.h"

namespace tiletune::server {

grpc::Status TuningServiceImpl::ListDevices(grpc::ServerContext* ctx, const v1::ListDevicesRequest*,
                                            v1::ListDevicesResponse* response) {
  // Devices answer before the database is open; only the credential counts.
  constexpr CallPolicy kPolicy{.method = "ListDevices", .before_ready = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall&) {
    for (const auto& b : ctx_.devices.statuses()) {
      auto* status = response->add_backends();
      status->set_name(b.name);
      status->set_available(b.available);
      status->set_reason(b.reason);
    }
    for (const auto& d : ctx_.devices.devices()) {
      *response->add_devices() = ctx_.devices.ToProto(*d);
    }
    response->set_daemon(ctx_.config.daemon_id);
    response->set_version(TILETUNE_VERSION);
    *response->mutable_started_at() = ctx_.started_at;
    if (!ctx_.ready.load()) {
      response->set_fleet_unknown("the database is not open yet");
    } else if (!ctx_.database.Attempt([&] {
                 for (auto& daemon : ListFleet(*ctx_.store, ctx_.config.fleet_gone_after_seconds)) {
                   *response->add_fleet() = std::move(daemon);
                 }
               })) {
      response->clear_fleet();
      response->set_fleet_unknown("the tuning database is unreachable: " + ctx_.database.why());
    }
    return grpc::Status::OK;
  });
}

}  // namespace tiletune::server

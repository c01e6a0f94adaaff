// ListRecords, ExportRecords and ImportRecords: the tuning records as
// clients see them. Past the admission gate each pages, streams or writes
// records in the store; an import also fills the lookup cache with what it
// wrote and, unless trusted, queues the jobs that verify it.
#include <algorithm>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "server/import_verification.h"
#include "server/page_filler.h"
#include "server/record_import.h"
#include "server/request_validation.h"
#include "server/tuning_service.h"

namespace tiletune::server {
namespace {

std::optional<kernels::FieldError> UnknownOp(const std::string& op) {
  if (op.empty() || kernels::IsKnownOp(op)) return std::nullopt;
  return kernels::FieldError{"op", "unknown op " + kernels::Quoted(op)};
}

}  // namespace

grpc::Status TuningServiceImpl::ListRecords(grpc::ServerContext* ctx,
                                            const v1::ListRecordsRequest* request,
                                            v1::ListRecordsResponse* response) {
  constexpr CallPolicy kPolicy{
      .method = "ListRecords", .ceiling = CallCeiling::kRequest, .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    auto size = PageSize(request->page_size(), ctx_.config.max_page_size);
    if (auto* e = std::get_if<kernels::FieldError>(&size)) return InvalidArgument(*e);
    if (auto e = UnknownOp(request->op())) return InvalidArgument(*e);
    db::RecordPage page;
    try {
      page = ctx_.store->ListRecords(request->op(), request->device_class(), std::get<int>(size),
                                     request->page_token());
    } catch (const db::InvalidPageToken& e) {
      return InvalidArgument({"page_token", e.what()});
    }
    if (call.deadline->Passed()) return call.deadline->Exceeded();
    PageFiller filler(ctx_.config, page.tokens_after, page.next_page_token);
    for (std::size_t i = 0; i < page.records.size(); ++i) {
      auto& r = page.records[i];
      // Judged against a device of the record's class here, if there is one.
      auto staleness = StalenessOf(r, ctx_.devices.FindByClass(r.device_class()));
      if (!filler.Fits(i, {&r, &staleness})) break;
      *response->add_staleness() = std::move(staleness);
      *response->add_records() = std::move(r);
    }
    response->set_next_page_token(filler.next_page_token());
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::ExportRecords(grpc::ServerContext* ctx,
                                              const v1::ExportRecordsRequest* request,
                                              grpc::ServerWriter<v1::ExportLine>* writer) {
  constexpr CallPolicy kPolicy{
      .method = "ExportRecords", .ceiling = CallCeiling::kStream, .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    if (auto e = UnknownOp(request->op())) return InvalidArgument(*e);
    bool stopped = false;
    bool out_of_time = false;
    ctx_.store->ExportRecords(request->op(), request->device_class(), [&](const v1::Record& r) {
      if (!stopped && call.deadline->Passed()) out_of_time = true;
      if (stopped || out_of_time || ctx->IsCancelled()) {
        stopped = true;
        return;
      }
      v1::ExportLine line = ToExportLine(r);
      CutToFit(ctx_.config, {&line});
      if (!writer->Write(line)) stopped = true;
    });
    if (ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "export cancelled"};
    // A cut-off export must not end OK: the client would take it for whole.
    if (out_of_time) return call.deadline->Exceeded();
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::ImportRecords(grpc::ServerContext* ctx,
                                              const v1::ImportRecordsRequest* request,
                                              v1::ImportRecordsResponse* response) {
  constexpr CallPolicy kPolicy{
      .method = "ImportRecords", .access = Access::kMutate, .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    if (request->jsonl().find_first_not_of(" \t\r\n") == std::string::npos) {
      return InvalidArgument({"jsonl", "is empty"});
    }
    auto parsed = ParseImportLines(request->jsonl(), ctx_.config);
    // Ask the store about conflicts even when some lines are bad, so one reply
    // lists every reject; nothing is written unless every line is good.
    auto conflicts = ctx_.store->ImportRecords(parsed.records, request->replace(),
                                               /*dry_run=*/true);
    for (auto& c : conflicts) parsed.rejects.push_back(std::move(c));
    std::sort(parsed.rejects.begin(), parsed.rejects.end(),
              [](const auto& a, const auto& b) { return a.line() < b.line(); });
    for (auto& r : parsed.rejects) *response->add_rejects() = std::move(r);
    if (response->rejects_size() > 0 || request->dry_run()) return grpc::Status::OK;

    MarkImported(parsed.records, request->trust(), call.caller.identity, ctx_.devices);
    auto late = ctx_.store->ImportRecords(parsed.records, request->replace(), /*dry_run=*/false);
    for (auto& r : late) *response->add_rejects() = std::move(r);
    if (!late.empty()) return grpc::Status::OK;
    for (const auto& r : parsed.records) {
      ctx_.cache.Put(r.record.device_class(), r.canonical_key,
                     std::make_shared<const v1::Record>(r.record));
    }
    response->set_imported(static_cast<int>(parsed.records.size()));
    ctx_.metrics.records_imported.Increment(parsed.records.size());
    spdlog::info("request={} peer={} caller={}: imported {} record(s), {}", RequestId(*ctx),
                 ctx->peer(), call.caller.identity, parsed.records.size(),
                 request->trust() ? "trusted" : "unverified");
    // Queued once the records are stored, so that a verify item always
    // finds the record it verifies.
    if (!request->trust()) {
      for (auto& v : QueueImportVerification(ctx_, parsed.records)) {
        *response->add_verifications() = std::move(v);
      }
    }
    return grpc::Status::OK;
  });
}

}  // namespace tiletune::server

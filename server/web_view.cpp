#include "server/web_view.h"

#include <httplib.h>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/client_context.h>

#include "web/embedded_assets.h"

namespace tiletune::server {
namespace {

// The pages load only what this port serves: no inline script, no other
// origin, not framed by another site.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

void SetCommonHeaders(httplib::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-store");
  res.set_header("Referrer-Policy", "no-referrer");
}

int HttpStatus(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return 200;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE: return 400;
    case grpc::StatusCode::UNAUTHENTICATED: return 401;
    case grpc::StatusCode::PERMISSION_DENIED: return 403;
    case grpc::StatusCode::NOT_FOUND: return 404;
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ALREADY_EXISTS: return 409;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return 429;
    case grpc::StatusCode::UNAVAILABLE: return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return 504;
    default: return 500;
  }
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    throw std::runtime_error("cannot write " + message.GetTypeName() + " as JSON");
  }
  return json;
}

void Answer(httplib::Response& res, int status, const google::protobuf::Message& body) {
  SetCommonHeaders(res);
  res.status = status;
  res.set_content(ToJson(body), "application/json");
}

// A refusal, as {"code": "...", "error": "..."}: the gRPC status the API
// gives, so a page shows the same message the CLI would.
void Refuse(httplib::Response& res, const grpc::Status& status) {
  google::protobuf::Struct body;
  (*body.mutable_fields())["code"].set_number_value(status.error_code());
  (*body.mutable_fields())["error"].set_string_value(status.error_message());
  Answer(res, HttpStatus(status.error_code()), body);
}

// The call's metadata from the request: its Authorization and X-Request-Id
// headers as they came (the authorizer judges them).
void Forward(const httplib::Request& req, grpc::ClientContext& call) {
  if (req.has_header("Authorization")) {
    call.AddMetadata("authorization", req.get_header_value("Authorization"));
  }
  if (req.has_header("X-Request-Id")) {
    call.AddMetadata("x-request-id", req.get_header_value("X-Request-Id"));
  }
}

// A query parameter as an int32 field (absent: 0, the field's default);
// nullopt, with a 400 naming it, when it is not an integer.
std::optional<int> IntParam(const httplib::Request& req, httplib::Response& res,
                            const std::string& name) {
  if (!req.has_param(name.c_str())) return 0;
  const std::string text = req.get_param_value(name.c_str());
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    Refuse(res, {grpc::StatusCode::INVALID_ARGUMENT, name + ": expected an integer"});
    return std::nullopt;
  }
  return value;
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

template <typename Response, typename Call>
void Unary(const httplib::Request& req, httplib::Response& res, Call&& call) {
  grpc::ClientContext context;
  Forward(req, context);
  Response response;
  const grpc::Status status = call(context, response);
  if (!status.ok()) return Refuse(res, status);
  Answer(res, 200, response);
}

void ServeAsset(httplib::Response& res, std::string_view name, const char* type) {
  SetCommonHeaders(res);
  res.set_content(std::string(*web::EmbeddedAsset(name)), type);
}

}  // namespace

WebView::WebView(const std::shared_ptr<grpc::Channel>& channel)
    : stub_(v1::TuningService::NewStub(channel)) {}

void WebView::AddRoutes(httplib::Server& server) const {
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    ServeAsset(res, "index.html", "text/html; charset=utf-8");
  });
  server.Get("/web/app.js", [](const httplib::Request&, httplib::Response& res) {
    ServeAsset(res, "app.js", "text/javascript; charset=utf-8");
  });
  server.Get("/web/app.css", [](const httplib::Request&, httplib::Response& res) {
    ServeAsset(res, "app.css", "text/css; charset=utf-8");
  });
  const auto stub = stub_;
  server.Get("/api/jobs", [stub](const httplib::Request& req, httplib::Response& res) {
    v1::ListJobsRequest request;
    const auto size = IntParam(req, res, "page_size");
    if (!size) return;
    request.set_page_size(*size);
    request.set_page_token(Param(req, "page_token"));
    for (const auto& [name, value] : req.params) {
      if (name != "state") continue;
      v1::JobState state{};
      if (!v1::JobState_Parse(value, &state)) {
        return Refuse(res, {grpc::StatusCode::INVALID_ARGUMENT, "state: unknown job state"});
      }
      request.add_states(state);
    }
    Unary<v1::ListJobsResponse>(req, res, [&](auto& context, auto& response) {
      return stub->ListJobs(&context, request, &response);
    });
  });
  server.Get(R"(/api/jobs/([^/]+))", [stub](const httplib::Request& req, httplib::Response& res) {
    v1::GetJobRequest request;
    request.set_job_id(req.matches[1]);
    Unary<v1::Job>(req, res, [&](auto& context, auto& response) {
      return stub->GetJob(&context, request, &response);
    });
  });
  server.Get(R"(/api/jobs/([^/]+)/items/(\d{1,9})/trials)",
             [stub](const httplib::Request& req, httplib::Response& res) {
               v1::ListTrialsRequest request;
               request.set_job_id(req.matches[1]);
               request.set_item_index(std::stoi(req.matches[2]));
               const auto size = IntParam(req, res, "page_size");
               if (!size) return;
               request.set_page_size(*size);
               request.set_page_token(Param(req, "page_token"));
               Unary<v1::ListTrialsResponse>(req, res, [&](auto& context, auto& response) {
                 return stub->ListTrials(&context, request, &response);
               });
             });
  // A form of another site cannot send this content type without a
  // preflight this port never answers: no cross-site cancel, even with auth
  // off.
  server.Post(R"(/api/jobs/([^/]+)/cancel)",
              [stub](const httplib::Request& req, httplib::Response& res) {
                if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
                  res.status = 415;
                  SetCommonHeaders(res);
                  res.set_content("{\"error\":\"cancel: Content-Type must be application/json\"}",
                                  "application/json");
                  return;
                }
                v1::CancelJobRequest request;
                request.set_job_id(req.matches[1]);
                Unary<v1::Job>(req, res, [&](auto& context, auto& response) {
                  return stub->CancelJob(&context, request, &response);
                });
              });
  server.Get("/api/records", [stub](const httplib::Request& req, httplib::Response& res) {
    v1::ListRecordsRequest request;
    const auto size = IntParam(req, res, "page_size");
    if (!size) return;
    request.set_page_size(*size);
    request.set_page_token(Param(req, "page_token"));
    request.set_op(Param(req, "op"));
    request.set_device_class(Param(req, "device_class"));
    Unary<v1::ListRecordsResponse>(req, res, [&](auto& context, auto& response) {
      return stub->ListRecords(&context, request, &response);
    });
  });
  server.Get("/api/devices", [stub](const httplib::Request& req, httplib::Response& res) {
    Unary<v1::ListDevicesResponse>(req, res, [&](auto& context, auto& response) {
      return stub->ListDevices(&context, v1::ListDevicesRequest(), &response);
    });
  });
}

}  // namespace tiletune::server

#include "bench/service/lookup_keys.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include <grpcpp/client_context.h>

namespace tiletune::bench {
namespace {

v1::LookupRequest SyntheticRequest(size_t i) {
  v1::LookupRequest request;
  auto& key = *request.mutable_key();
  key.set_op("gemm");
  key.set_input_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair<const char*, int64_t>{"m", 16 * static_cast<int64_t>(i + 1)},
                            {"n", 256},
                            {"k", 256}}) {
    auto* dim = key.add_shape();
    dim->set_name(name);
    dim->set_size(size);
  }
  return request;
}

}  // namespace

LookupKeys ChooseLookupKeys(v1::TuningService::Stub& stub, size_t count,
                            std::chrono::milliseconds timeout) {
  LookupKeys keys;
  v1::ListRecordsRequest list;
  do {
    list.set_page_size(static_cast<int32_t>(std::min<size_t>(count - keys.requests.size(), 500)));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    v1::ListRecordsResponse page;
    grpc::Status status = stub.ListRecords(&context, list, &page);
    if (!status.ok()) throw std::runtime_error("ListRecords failed: " + status.error_message());
    for (const auto& record : page.records()) {
      if (keys.requests.size() == count) break;
      v1::LookupRequest request;
      *request.mutable_key() = record.key();
      request.mutable_device()->set_device_class(record.device_class());
      keys.requests.push_back(std::move(request));
    }
    list.set_page_token(page.next_page_token());
  } while (!list.page_token().empty() && keys.requests.size() < count);

  keys.from_records = !keys.requests.empty();
  if (!keys.from_records) {
    for (size_t i = 0; i < count; ++i) keys.requests.push_back(SyntheticRequest(i));
  }
  return keys;
}

}  // namespace tiletune::bench

#include "a2ad/transport/a2a/grpc/grpc_calls.hpp"

#include "a2ad/core/trace.hpp"

#include <grpc/grpc_security_constants.h>

#include <cctype>

#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http/http_types.hpp"
#include "google/rpc/status.pb.h"

namespace a2ad::transport::grpc_calls {
using core::Error;
using core::ErrorCode;
using protocol::WireVersion;

namespace {

grpc::StatusCode CodeOf(std::string_view name) {
  static constexpr std::pair<std::string_view, grpc::StatusCode> kCodes[] = {
      {"CANCELLED", grpc::CANCELLED},
      {"INVALID_ARGUMENT", grpc::INVALID_ARGUMENT},
      {"DEADLINE_EXCEEDED", grpc::DEADLINE_EXCEEDED},
      {"NOT_FOUND", grpc::NOT_FOUND},
      {"ALREADY_EXISTS", grpc::ALREADY_EXISTS},
      {"PERMISSION_DENIED", grpc::PERMISSION_DENIED},
      {"RESOURCE_EXHAUSTED", grpc::RESOURCE_EXHAUSTED},
      {"FAILED_PRECONDITION", grpc::FAILED_PRECONDITION},
      {"ABORTED", grpc::ABORTED},
      {"UNIMPLEMENTED", grpc::UNIMPLEMENTED},
      {"INTERNAL", grpc::INTERNAL},
      {"UNAVAILABLE", grpc::UNAVAILABLE},
      {"DATA_LOSS", grpc::DATA_LOSS},
      {"UNAUTHENTICATED", grpc::UNAUTHENTICATED},
  };
  for (const auto& [n, c] : kCodes)
    if (n == name) return c;
  return grpc::UNKNOWN;
}

std::string Lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

grpc::Status StatusOf(const Error& error, WireVersion version) {
  const Error e = ClientFacing(error);
  const protocol::ErrorMapping& m = protocol::MapError(e.code);
  const std::string text = e.message.empty() ? std::string(m.default_message) : e.message;
  const std::string message = version == WireVersion::kV03
                                  ? std::string(protocol::V03ErrorName(e.code)) + ": " + text
                                  : text;
  const grpc::StatusCode code = CodeOf(m.grpc_status);
  google::rpc::ErrorInfo info;
  info.set_reason(std::string(core::ErrorCodeName(e.code)));
  info.set_domain("a2a-protocol.org");
  for (const auto& [k, v] : e.details) (*info.mutable_metadata())[k] = v;
  google::rpc::Status status;
  status.set_code(static_cast<int>(code));
  status.set_message(message);
  status.add_details()->PackFrom(info);
  return grpc::Status(code, message, status.SerializeAsString());
}

google::protobuf::util::JsonParseOptions Lenient() {
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = true;
  return o;
}

SsePumpSpec StreamSpec(WireVersion version, bool close_on_interrupt,
                       std::shared_ptr<std::optional<Error>> cut, bool from_model) {
  auto closes = [close_on_interrupt](const tasks::StreamItem& item) {
    return EndsA2aStream(item, close_on_interrupt);
  };
  SsePumpSpec spec;
  spec.keep_alive.clear();  // HTTP/2 keeps the connection alive itself
  spec.closes = closes;
  if (from_model)  // GrpcSink writes them from the model (grpc_model.hpp)
    spec.keeps = [](const tasks::StreamItem& item) { return item.a2a; };
  spec.frame = [version, closes](const tasks::StreamItem& item) {
    if (!item.a2a) return std::string();
    if (version == WireVersion::kV10) return item.Json(protocol::Wire::kV10) + "\n";
    return item.Json(protocol::Wire::kV03Proto, StreamFinal(item, closes(item))) + "\n";
  };
  spec.cut_short = [cut = std::move(cut)](const Error& why) {
    *cut = why;
    return std::string();
  };
  return spec;
}

std::optional<Error> CallRunner::Prepare(grpc::CallbackServerContext* c, std::string_view name,
                                         const google::protobuf::Message& req,
                                         CallState& call) const {
  call.ctx = protocol::CallContext::Anonymous(protocol::Binding::kGrpc, version_);
  HttpRequest& as_http = call.headers;  // the metadata the HTTP bindings read, as headers
  for (const auto& [key, value] : c->client_metadata()) {
    const std::string_view k(key.data(), key.size());
    const char* header = k == "a2a-version"               ? "A2A-Version"
                         : k == "a2a-extensions"          ? "A2A-Extensions"
                         : k == "x-a2a-extensions"        ? "X-A2A-Extensions"
                         : k == "last-event-id"           ? "Last-Event-ID"
                         : k == "a2a-last-generation"     ? "A2A-Last-Generation"
                         : k == "a2a-current-generation"  ? "A2A-Current-Generation"
                         : k == "a2a-if-generation-match" ? "A2A-If-Generation-Match"
                         : k == "authorization"           ? "Authorization"
                         : k == "x-api-key"               ? "X-API-Key"
                         : k == "traceparent"             ? "traceparent"
                                                          : nullptr;
    if (header) as_http.headers.emplace_back(header, std::string(value.data(), value.size()));
  }
  // A client certificate verified in the TLS handshake (only verifying modes are
  // configured, so a subject here is a verified one).
  if (auto tls = c->auth_context()) {
    const auto subject = tls->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME);
    if (!subject.empty())
      as_http.client_cert_subject.assign(subject.front().data(), subject.front().size());
  }
  // Who calls, before anything else is looked at (auth.hpp); the credential stays out of
  // the headers the operations see.
  if (auth_) {
    auto who = auth_->AuthenticateBlocking(as_http);
    if (!who) return std::move(who).error();
    if (auto limited = auth_->Throttle(*who)) return limited;
    call.ctx.principal = std::move(who).value();
  }
  std::erase_if(as_http.headers,
                [](const auto& h) { return h.first == "Authorization" || h.first == "X-API-Key"; });
  // A caller's trace goes on into the run it starts (no span of the call itself on gRPC).
  if (core::TraceParent::Parse(as_http.Header("traceparent")))
    call.ctx.traceparent = std::string(as_http.Header("traceparent"));
  if (const Operation* op = ops_.Find(name))
    if (auto denied = RequireScope(call.ctx, op->scope)) return denied;
  const std::string_view requested = as_http.Header("A2A-Version");
  if (auto e = version_ == WireVersion::kV10 ? RequireV10(requested) : RequireV03(requested))
    return e;
  if (!serves_)
    return Error(ErrorCode::kVersionNotSupported,
                 "this server serves A2A 1.0 only; call lf.a2a.v1.A2AService",
                 {{"supportedVersions", "1.0"}, {"requestedVersion", "0.3"}});
  if (extensions_) {
    extensions_->Activate(as_http, call.ctx);
    // The echo under the version's header name (a2a-extensions, x-a2a-extensions for 0.3).
    if (auto echo = ExtensionRegistry::EchoHeader(call.ctx))
      c->AddInitialMetadata(Lower(echo->first), echo->second);
    if (auto e = extensions_->CheckRequired(call.ctx)) return e;
  }
  if (!ops_.Find(name))  // an extension's RPC whose extension is not registered
    return Error(ErrorCode::kUnsupportedOperation, std::string(name) + " is not served here",
                 {{"method", std::string(name)}});
  // The params: the request's ProtoJSON, as a DOM made from the message (grpc_model.hpp), or
  // for what that does not write, protobuf's text of it parsed.
  if (auto params = grpc_model::RequestToJson(req)) {
    call.params = std::move(*params);
    return std::nullopt;
  }
  std::string text;
  google::protobuf::util::JsonPrintOptions print;
  if (auto st = google::protobuf::util::MessageToJsonString(req, &text, print); !st.ok())
    return Error(ErrorCode::kInvalidParams, "request: " + st.ToString());
  auto params = protocol::ParseJson(text);
  if (!params) return params.error();
  call.params = std::move(params).value();
  return std::nullopt;
}

}  // namespace a2ad::transport::grpc_calls

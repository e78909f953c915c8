#include "a2ad/transport/grpc/grpc_binding.hpp"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http_types.hpp"
#include "a2ad/transport/sse_pump.hpp"
#include "google/rpc/status.pb.h"
#include "lf/a2a/v1/a2a.grpc.pb.h"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
namespace v1 = lf::a2a::v1;
using core::Error;
using core::ErrorCode;

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

/// The gRPC status of `error`, with a google.rpc.Status holding its ErrorInfo as details.
grpc::Status StatusOf(const Error& error) {
  const Error e = ClientFacing(error);
  const protocol::ErrorMapping& m = protocol::MapError(e.code);
  const std::string message = e.message.empty() ? std::string(m.default_message) : e.message;
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

/// What one call carries from the gRPC thread to the I/O executor.
struct CallState {
  protocol::CallContext ctx =
      protocol::CallContext::Anonymous(protocol::Binding::kGrpc, protocol::WireVersion::kV10);
  json::value params;
};

/// The call's context and params, or why it is refused. Runs on a gRPC thread; sets the
/// initial metadata (the activated extensions) before anything is sent.
std::optional<Error> Prepare(grpc::CallbackServerContext* c, const google::protobuf::Message& req,
                             const ExtensionRegistry* extensions, CallState& call) {
  HttpRequest as_http;  // the metadata the HTTP bindings read, as headers
  for (const auto& [key, value] : c->client_metadata()) {
    const std::string_view k(key.data(), key.size());
    if (k == "a2a-version" || k == "a2a-extensions")
      as_http.headers.emplace_back(k == "a2a-version" ? "A2A-Version" : "A2A-Extensions",
                                   std::string(value.data(), value.size()));
  }
  if (auto e = RequireV10(as_http.Header("A2A-Version"))) return e;
  if (extensions) {
    extensions->Activate(as_http, call.ctx);
    if (auto echo = ExtensionRegistry::EchoHeader(call.ctx))
      c->AddInitialMetadata("a2a-extensions", echo->second);
    if (auto e = extensions->CheckRequired(call.ctx)) return e;
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

google::protobuf::util::JsonParseOptions Lenient() {
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = true;  // the other bindings' JSON may say more than the proto
  return o;
}

/// Shared by a streaming call's reactor (gRPC threads) and its pump (the I/O executor).
struct StreamShared {
  std::mutex mu;
  std::function<void(bool)> write_done;  // the pending write's continuation
  std::function<void()> client_gone;
  bool cancelled = false;
  v1::StreamResponse message;  // the message being written
  asio::any_io_executor io;
};

class StreamReactor : public grpc::ServerWriteReactor<v1::StreamResponse> {
 public:
  explicit StreamReactor(std::shared_ptr<StreamShared> s) : s_(std::move(s)) {}
  void OnWriteDone(bool ok) override {
    std::function<void(bool)> done;
    {
      std::lock_guard lock(s_->mu);
      done = std::move(s_->write_done);
      s_->write_done = nullptr;
    }
    if (done) done(ok);
  }
  void OnCancel() override {
    std::function<void()> gone;
    {
      std::lock_guard lock(s_->mu);
      s_->cancelled = true;
      gone = std::move(s_->client_gone);
      s_->client_gone = nullptr;
    }
    if (gone) asio::post(s_->io, std::move(gone));
  }
  void OnDone() override { delete this; }

 private:
  std::shared_ptr<StreamShared> s_;
};

/// Where PumpStream writes for a gRPC stream: each frame is one StreamResponse's ProtoJSON
/// followed by '\n' (JSON text from the writer never holds a raw newline).
class GrpcSink : public SseSink {
 public:
  GrpcSink(StreamReactor* reactor, std::shared_ptr<StreamShared> s)
      : reactor_(reactor), s_(std::move(s)) {}

  asio::awaitable<bool> Write(std::string bytes) override {
    size_t pos = 0;
    while (pos < bytes.size()) {
      size_t end = bytes.find('\n', pos);
      if (end == std::string::npos) end = bytes.size();
      const std::string_view json(bytes.data() + pos, end - pos);
      pos = end + 1;
      if (json.empty()) continue;
      s_->message.Clear();
      if (auto st = google::protobuf::util::JsonStringToMessage(
              google::protobuf::StringPiece(json.data(), json.size()), &s_->message, Lenient());
          !st.ok()) {
        core::LogError("grpc: a stream event does not fit StreamResponse: " + st.ToString());
        co_return false;
      }
      if (!co_await WriteOne()) co_return false;
    }
    co_return true;
  }
  void OnClientGone(std::function<void()> f) override {
    std::lock_guard lock(s_->mu);
    if (s_->cancelled)
      asio::post(s_->io, std::move(f));
    else
      s_->client_gone = std::move(f);
  }
  void OnServerStopping(std::function<void()>) override {}  // Shutdown cancels every call

 private:
  asio::awaitable<bool> WriteOne() {
    return asio::async_initiate<const asio::use_awaitable_t<>&, void(bool)>(
        [this](auto handler) {
          auto ex = asio::get_associated_executor(handler, s_->io);
          auto held = std::make_shared<decltype(handler)>(std::move(handler));
          {
            std::lock_guard lock(s_->mu);
            s_->write_done = [held, ex](bool ok) {
              asio::post(ex, [held, ok]() mutable { std::move (*held)(ok); });
            };
          }
          reactor_->StartWrite(&s_->message);
        },
        asio::use_awaitable);
  }

  StreamReactor* reactor_;
  std::shared_ptr<StreamShared> s_;
};

SsePumpSpec GrpcStreamSpec(bool close_on_interrupt, std::shared_ptr<std::optional<Error>> cut) {
  auto closes = [close_on_interrupt](const tasks::StreamItem& item) {
    return EndsA2aStream(item, close_on_interrupt);
  };
  SsePumpSpec spec;
  spec.keep_alive.clear();  // HTTP/2 keeps the connection alive itself
  spec.closes = closes;
  spec.frame = [](const tasks::StreamItem& item) {
    return item.a2a ? item.Json(0) + "\n" : std::string();
  };
  spec.cut_short = [cut](const Error& why) {
    *cut = why;
    return std::string();
  };
  return spec;
}

}  // namespace

struct GrpcBinding::Impl final : v1::A2AService::CallbackService {
  Impl(const OperationTable& ops, asio::any_io_executor io, const ExtensionRegistry* ext)
      : ops_(ops), io_(std::move(io)), extensions_(ext) {}

  template <class Resp>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* c, std::string_view name,
                                  const google::protobuf::Message& req, Resp* resp) {
    grpc::ServerUnaryReactor* reactor = c->DefaultReactor();
    auto call = std::make_shared<CallState>();
    if (auto refusal = Prepare(c, req, extensions_, *call)) {
      reactor->Finish(StatusOf(*refusal));
      return reactor;
    }
    const Operation* op = ops_.Find(name);
    auto finished = std::make_shared<bool>(false);
    asio::co_spawn(
        io_,
        [op, call, reactor, resp, finished]() -> asio::awaitable<void> {
          const OperationCall oc{call->ctx, call->params, {}};
          auto r = co_await op->handler(oc);
          grpc::Status status = grpc::Status::OK;
          if (!r) {
            status = StatusOf(r.error());
          } else if (r->stream) {
            status = StatusOf(Error(ErrorCode::kInternal, "a unary RPC got a stream"));
          } else if (r->result_json != "null") {
            if (auto st =
                    google::protobuf::util::JsonStringToMessage(r->result_json, resp, Lenient());
                !st.ok())
              status = StatusOf(
                  Error(ErrorCode::kInternal,
                        "the result does not fit " + resp->GetTypeName() + ": " + st.ToString()));
          }
          *finished = true;
          reactor->Finish(status);
        },
        [reactor, finished](std::exception_ptr ep) {
          if (ep && !*finished) {
            *finished = true;
            reactor->Finish(StatusOf(Error(ErrorCode::kInternal, "the handler threw")));
          }
        });
    return reactor;
  }

  grpc::ServerWriteReactor<v1::StreamResponse>* Streaming(grpc::CallbackServerContext* c,
                                                          std::string_view name,
                                                          const google::protobuf::Message& req) {
    auto shared = std::make_shared<StreamShared>();
    shared->io = io_;
    auto* reactor = new StreamReactor(shared);
    auto call = std::make_shared<CallState>();
    if (auto refusal = Prepare(c, req, extensions_, *call)) {
      reactor->Finish(StatusOf(*refusal));
      return reactor;
    }
    const Operation* op = ops_.Find(name);
    auto finished = std::make_shared<bool>(false);
    asio::co_spawn(
        io_,
        [op, call, reactor, shared, finished]() -> asio::awaitable<void> {
          const OperationCall oc{call->ctx, call->params, {}};
          auto r = co_await op->handler(oc);
          if (!r || !r->stream) {
            *finished = true;
            reactor->Finish(r ? StatusOf(Error(ErrorCode::kInternal, "no stream"))
                              : StatusOf(r.error()));
            co_return;
          }
          auto cut = std::make_shared<std::optional<Error>>();
          GrpcSink sink(reactor, shared);
          co_await PumpStream(sink, std::move(*r->stream),
                              GrpcStreamSpec(r->stream_closes_on_interrupt, cut));
          bool cancelled;
          {
            std::lock_guard lock(shared->mu);
            cancelled = shared->cancelled;
          }
          *finished = true;
          if (*cut)
            reactor->Finish(StatusOf(**cut));
          else if (cancelled)
            reactor->Finish(grpc::Status(grpc::CANCELLED, "the client went away"));
          else
            reactor->Finish(grpc::Status::OK);
        },
        [reactor, finished](std::exception_ptr ep) {
          if (ep && !*finished) {
            *finished = true;
            reactor->Finish(StatusOf(Error(ErrorCode::kInternal, "the stream threw")));
          }
        });
    return reactor;
  }

  // ---- lf.a2a.v1.A2AService ------------------------------------------------------------------
  grpc::ServerUnaryReactor* SendMessage(grpc::CallbackServerContext* c,
                                        const v1::SendMessageRequest* req,
                                        v1::SendMessageResponse* resp) override {
    return Unary(c, "SendMessage", *req, resp);
  }
  grpc::ServerWriteReactor<v1::StreamResponse>* SendStreamingMessage(
      grpc::CallbackServerContext* c, const v1::SendMessageRequest* req) override {
    return Streaming(c, "SendStreamingMessage", *req);
  }
  grpc::ServerUnaryReactor* GetTask(grpc::CallbackServerContext* c, const v1::GetTaskRequest* req,
                                    v1::Task* resp) override {
    return Unary(c, "GetTask", *req, resp);
  }
  grpc::ServerUnaryReactor* ListTasks(grpc::CallbackServerContext* c,
                                      const v1::ListTasksRequest* req,
                                      v1::ListTasksResponse* resp) override {
    return Unary(c, "ListTasks", *req, resp);
  }
  grpc::ServerUnaryReactor* CancelTask(grpc::CallbackServerContext* c,
                                       const v1::CancelTaskRequest* req, v1::Task* resp) override {
    return Unary(c, "CancelTask", *req, resp);
  }
  grpc::ServerWriteReactor<v1::StreamResponse>* SubscribeToTask(
      grpc::CallbackServerContext* c, const v1::SubscribeToTaskRequest* req) override {
    return Streaming(c, "SubscribeToTask", *req);
  }
  grpc::ServerUnaryReactor* CreateTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v1::TaskPushNotificationConfig* req,
      v1::TaskPushNotificationConfig* resp) override {
    return Unary(c, "CreateTaskPushNotificationConfig", *req, resp);
  }
  grpc::ServerUnaryReactor* GetTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v1::GetTaskPushNotificationConfigRequest* req,
      v1::TaskPushNotificationConfig* resp) override {
    return Unary(c, "GetTaskPushNotificationConfig", *req, resp);
  }
  grpc::ServerUnaryReactor* ListTaskPushNotificationConfigs(
      grpc::CallbackServerContext* c, const v1::ListTaskPushNotificationConfigsRequest* req,
      v1::ListTaskPushNotificationConfigsResponse* resp) override {
    return Unary(c, "ListTaskPushNotificationConfigs", *req, resp);
  }
  grpc::ServerUnaryReactor* GetExtendedAgentCard(grpc::CallbackServerContext* c,
                                                 const v1::GetExtendedAgentCardRequest* req,
                                                 v1::AgentCard* resp) override {
    return Unary(c, "GetExtendedAgentCard", *req, resp);
  }
  grpc::ServerUnaryReactor* DeleteTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v1::DeleteTaskPushNotificationConfigRequest* req,
      google::protobuf::Empty* resp) override {
    return Unary(c, "DeleteTaskPushNotificationConfig", *req, resp);
  }

  const OperationTable& ops_;
  asio::any_io_executor io_;
  const ExtensionRegistry* extensions_;
  std::unique_ptr<grpc::Server> server_;
};

GrpcBinding::GrpcBinding(const OperationTable& operations, asio::any_io_executor io,
                         const ExtensionRegistry* extensions)
    : impl_(std::make_unique<Impl>(operations, std::move(io), extensions)) {}

GrpcBinding::~GrpcBinding() { Shutdown(); }

core::Result<uint16_t> GrpcBinding::Listen(const std::string& host, uint16_t port) {
  const std::string address =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  int selected = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &selected);
  builder.RegisterService(impl_.get());
  impl_->server_ = builder.BuildAndStart();
  if (!impl_->server_ || selected == 0)
    return Error(ErrorCode::kInvalidParams, "cannot serve gRPC on " + address);
  return static_cast<uint16_t>(selected);
}

void GrpcBinding::Shutdown() {
  if (!impl_->server_) return;
  impl_->server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->server_->Wait();
  impl_->server_.reset();
}

}  // namespace a2ad::transport

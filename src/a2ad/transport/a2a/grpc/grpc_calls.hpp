#pragma once
// The machinery both gRPC services of the binding share (grpc_binding.hpp): lf.a2a.v1 (A2A
// 1.0, grpc_binding.cpp) and a2a.v1 (A2A 0.3, grpc_service_v03.cpp). A CallRunner serves one
// service's RPCs over the operation table: the request message becomes its ProtoJSON DOM (the
// params of the operation in that version's shape, a2a_operations.hpp protocol::Wire; made
// from the message, grpc_model.hpp), and the handler runs on the I/O executor. An A2A 1.0
// Task or Message result, and every event of an A2A 1.0 stream, is written into the response
// message from the model (grpc_model.hpp); any other result is JSON text parsed into it, and
// 0.3 stream events are ProtoJSON frames. A stream is pumped (sse_pump.hpp) one response
// message per write. Internal to the module transport_grpc.
//
// Thread safety: a CallRunner is immutable after construction; its methods are called on
// gRPC's threads, which only hand work to the I/O executor; calls finish from there.
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/a2a/extensions.hpp"
#include "a2ad/transport/a2a/grpc/grpc_model.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/http/sse_pump.hpp"

namespace a2ad::transport::grpc_calls {

/// The gRPC status of `error` (after ClientFacing), coded by the error table's gRPC column,
/// with a google.rpc.Status holding a google.rpc.ErrorInfo (reason, domain
/// "a2a-protocol.org", metadata: the error's details) in grpc-status-details-bin. For A2A 0.3
/// the message is prefixed with the 0.3 SDKs' error class: "TaskNotFoundError: ..." (WIRE.md
/// §9).
grpc::Status StatusOf(const core::Error& error, protocol::WireVersion version);

/// Parse options for results: unknown members are ignored (the JSON may say more than the
/// proto).
google::protobuf::util::JsonParseOptions Lenient();

/// What PumpStream writes to a GrpcSink for a stream of `version`: with `from_model` (A2A
/// 1.0's lf.a2a.v1.StreamResponse) the items themselves, else one response's ProtoJSON per
/// line (0.3: `final` only on the status update that ends the stream). An error that cuts the
/// stream short is stored in `cut` (the call finishes with its status).
SsePumpSpec StreamSpec(protocol::WireVersion version, bool close_on_interrupt,
                       std::shared_ptr<std::optional<core::Error>> cut, bool from_model);

/// What one call carries from the gRPC thread to the I/O executor.
struct CallState {
  protocol::CallContext ctx;
  boost::json::value params;
  HttpRequest headers;  // the metadata the operations read, under the HTTP headers' names
};

class CallRunner {
 public:
  /// `version` is the service's A2A version. With `serves` false every call is refused as
  /// an unsupported version (`--a2a-versions 1.0` and the 0.3 service). `auth` (may be null:
  /// every call is the anonymous development caller) authenticates each call's metadata.
  CallRunner(const OperationTable& ops, boost::asio::any_io_executor io,
             const ExtensionRegistry* extensions, protocol::WireVersion version, bool serves,
             Authenticator* auth = nullptr)
      : ops_(ops),
        io_(std::move(io)),
        extensions_(extensions),
        version_(version),
        serves_(serves),
        auth_(auth) {}

  /// Serves a unary RPC with the operation named `name` (its A2A 1.0 name).
  template <class Resp>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* c, std::string_view name,
                                  const google::protobuf::Message& req, Resp* resp) const;
  /// Serves a server-streaming RPC with the operation named `name`.
  template <class Resp>
  grpc::ServerWriteReactor<Resp>* Streaming(grpc::CallbackServerContext* c, std::string_view name,
                                            const google::protobuf::Message& req) const;

 private:
  /// The call's context and params, or why it is refused. Runs on a gRPC thread; sets the
  /// initial metadata (the activated extensions) before anything is sent. Metadata:
  /// `authorization` / `x-api-key` (auth.hpp; then the scope of the operation `name` is
  /// checked), `a2a-version` (absent or the service's version), `a2a-extensions` /
  /// `x-a2a-extensions`.
  std::optional<core::Error> Prepare(grpc::CallbackServerContext* c, std::string_view name,
                                     const google::protobuf::Message& req, CallState& call) const;
  /// Prepares the call, then runs `body(op, call, finished)` (a coroutine) on the I/O
  /// executor; `body` finishes the call and sets `*finished`. A refusal finishes it here,
  /// and so does `body` throwing before it finished (kInternal, `threw`).
  template <class Reactor, class Body>
  void Spawn(grpc::CallbackServerContext* c, std::string_view name,
             const google::protobuf::Message& req, Reactor* reactor, const char* threw,
             Body body) const;
  const OperationTable& ops_;
  boost::asio::any_io_executor io_;
  const ExtensionRegistry* extensions_;
  protocol::WireVersion version_;
  bool serves_;
  Authenticator* auth_;
};

/// a2a.v1.A2AService, the A2A 0.3 service (grpc_service_v03.cpp), served by `runner` (whose
/// version is kV03).
std::unique_ptr<grpc::Service> MakeV03Service(CallRunner runner);

// ---- results as the model (WritesModel) ----------------------------------------------------

/// Writes a result handed over as the model into the response; nullopt when done, else why
/// not (a response of another type: the operation table and the service disagree).
inline std::optional<std::string> FromModel(const OperationResult& r, lf::a2a::v1::Task* resp) {
  if (!r.task) return "not a task";
  return grpc_model::ToProto(*r.task, resp);
}
inline std::optional<std::string> FromModel(const OperationResult& r,
                                            lf::a2a::v1::SendMessageResponse* resp) {
  if (r.task) return grpc_model::ToProto(*r.task, resp->mutable_task());
  return grpc_model::ToProto(*r.message, resp->mutable_message());
}
template <class Resp>
std::optional<std::string> FromModel(const OperationResult&, Resp*) {
  return "not written from the model";
}
inline std::optional<std::string> FromModel(const protocol::StreamEvent& e,
                                            lf::a2a::v1::StreamResponse* resp) {
  return grpc_model::ToProto(e, resp);
}
template <class Resp>
std::optional<std::string> FromModel(const protocol::StreamEvent&, Resp*) {
  return "not written from the model";
}

// ---- streams ------------------------------------------------------------------------------

/// Shared by a streaming call's reactor (gRPC threads) and its pump (the I/O executor).
template <class Resp>
struct StreamShared {
  std::mutex mu;
  std::function<void(bool)> write_done;  // the pending write's continuation
  std::function<void()> client_gone;
  bool cancelled = false;
  Resp message;  // the message being written
  boost::asio::any_io_executor io;
};

template <class Resp>
class StreamReactor : public grpc::ServerWriteReactor<Resp> {
 public:
  explicit StreamReactor(std::shared_ptr<StreamShared<Resp>> s) : s_(std::move(s)) {}
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
    if (gone) boost::asio::post(s_->io, std::move(gone));
  }
  void OnDone() override { delete this; }

 private:
  std::shared_ptr<StreamShared<Resp>> s_;
};

/// Where PumpStream writes for a gRPC stream: A2A 1.0's items as they are (WriteItems, written
/// from the model); A2A 0.3's as frames, each one response's ProtoJSON followed by '\n' (JSON
/// text from the writer never holds a raw newline).
template <class Resp>
class GrpcSink : public SseSink {
 public:
  /// `closes`: the item that ends the stream (SsePumpSpec::closes); WriteItems writes it
  /// with the call's OK status in one go (StartWriteAndFinish), and the call is then over
  /// (finished()).
  GrpcSink(StreamReactor<Resp>* reactor, std::shared_ptr<StreamShared<Resp>> s,
           std::function<bool(const tasks::StreamItem&)> closes)
      : reactor_(reactor), s_(std::move(s)), closes_(std::move(closes)) {}

  /// True once the call was finished with the last item (WriteItems).
  bool finished() const { return finished_; }

  boost::asio::awaitable<bool> Write(std::string bytes) override {
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
        core::LogError("grpc: a stream event does not fit " + s_->message.GetTypeName() + ": " +
                       st.ToString());
        co_return false;
      }
      if (!co_await WriteOne()) co_return false;
    }
    co_return true;
  }
  boost::asio::awaitable<bool> WriteItems(std::vector<tasks::StreamItemPtr> items) override {
    for (const auto& item : items) {
      if (auto why = FromModel(item->event, &s_->message)) {
        core::LogError("grpc: a stream event does not fit " + s_->message.GetTypeName() + ": " +
                       *why);
        co_return false;
      }
      if (&item == &items.back() && closes_ && closes_(*item)) {
        // The stream's last message and its status in one go: no write completion to wait
        // for (OnWriteDone is not called for it; the call ends with OnDone).
        finished_ = true;
        reactor_->StartWriteAndFinish(&s_->message, grpc::WriteOptions(), grpc::Status::OK);
        co_return true;
      }
      if (!co_await WriteOne()) co_return false;
    }
    co_return true;
  }
  void OnClientGone(std::function<void()> f) override {
    std::lock_guard lock(s_->mu);
    if (s_->cancelled)
      boost::asio::post(s_->io, std::move(f));
    else
      s_->client_gone = std::move(f);
  }
  void OnServerStopping(std::function<void()>) override {}  // Shutdown cancels every call

 private:
  boost::asio::awaitable<bool> WriteOne() {
    namespace asio = boost::asio;
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

  StreamReactor<Resp>* reactor_;
  std::shared_ptr<StreamShared<Resp>> s_;
  std::function<bool(const tasks::StreamItem&)> closes_;
  bool finished_ = false;
};

// ---- CallRunner's templates ---------------------------------------------------------------

template <class Reactor, class Body>
void CallRunner::Spawn(grpc::CallbackServerContext* c, std::string_view name,
                       const google::protobuf::Message& req, Reactor* reactor, const char* threw,
                       Body body) const {
  auto call = std::make_shared<CallState>();
  if (auto refusal = Prepare(c, name, req, *call)) {
    reactor->Finish(StatusOf(*refusal, version_));
    return;
  }
  const protocol::WireVersion v = version_;
  auto finished = std::make_shared<bool>(false);
  // co_spawn keeps the function object alive while its coroutine runs, so `body`'s
  // captures are too.
  boost::asio::co_spawn(
      io_,
      [body = std::move(body), op = ops_.Find(name), call, finished] {
        return body(op, call, finished);
      },
      [reactor, finished, v, threw](const std::exception_ptr& ep) {
        if (ep && !*finished) {
          *finished = true;
          reactor->Finish(StatusOf(core::Error(core::ErrorCode::kInternal, threw), v));
        }
      });
}

template <class Resp>
grpc::ServerUnaryReactor* CallRunner::Unary(grpc::CallbackServerContext* c, std::string_view name,
                                            const google::protobuf::Message& req,
                                            Resp* resp) const {
  namespace asio = boost::asio;
  using core::Error;
  using core::ErrorCode;
  grpc::ServerUnaryReactor* reactor = c->DefaultReactor();
  Spawn(
      c, name, req, reactor, "the handler threw",
      [reactor, resp, v = version_](const Operation* op, std::shared_ptr<CallState> call,
                                    std::shared_ptr<bool> finished) -> asio::awaitable<void> {
        const OperationCall oc{call->ctx, call->params, &call->headers};
        auto r = co_await op->handler(oc);
        grpc::Status status = grpc::Status::OK;
        if (!r) {
          status = StatusOf(r.error(), v);
        } else if (r->stream) {
          status = StatusOf(Error(ErrorCode::kInternal, "a unary RPC got a stream"), v);
        } else if (r->task || r->message) {
          if (auto why = FromModel(*r, resp))
            status = StatusOf(Error(ErrorCode::kInternal,
                                    "the result does not fit " + resp->GetTypeName() + ": " + *why),
                              v);
        } else if (r->result_json != "null") {
          if (auto st =
                  google::protobuf::util::JsonStringToMessage(r->result_json, resp, Lenient());
              !st.ok())
            status = StatusOf(
                Error(ErrorCode::kInternal,
                      "the result does not fit " + resp->GetTypeName() + ": " + st.ToString()),
                v);
        }
        *finished = true;
        reactor->Finish(status);
      });
  return reactor;
}

template <class Resp>
grpc::ServerWriteReactor<Resp>* CallRunner::Streaming(grpc::CallbackServerContext* c,
                                                      std::string_view name,
                                                      const google::protobuf::Message& req) const {
  namespace asio = boost::asio;
  using core::Error;
  using core::ErrorCode;
  auto shared = std::make_shared<StreamShared<Resp>>();
  shared->io = io_;
  auto* reactor = new StreamReactor<Resp>(shared);
  Spawn(
      c, name, req, reactor, "the stream threw",
      [reactor, shared, v = version_](const Operation* op, std::shared_ptr<CallState> call,
                                      std::shared_ptr<bool> finished) -> asio::awaitable<void> {
        const OperationCall oc{call->ctx, call->params, &call->headers};
        auto r = co_await op->handler(oc);
        if (!r || !r->stream) {
          *finished = true;
          reactor->Finish(r ? StatusOf(Error(ErrorCode::kInternal, "no stream"), v)
                            : StatusOf(r.error(), v));
          co_return;
        }
        auto cut = std::make_shared<std::optional<Error>>();
        SsePumpSpec spec = StreamSpec(v, r->stream_closes_on_interrupt, cut,
                                      std::is_same_v<Resp, lf::a2a::v1::StreamResponse>);
        GrpcSink<Resp> sink(reactor, shared, spec.closes);
        co_await PumpStream(sink, std::move(*r->stream), std::move(spec));
        if (sink.finished()) {
          *finished = true;
          co_return;
        }
        bool cancelled;
        {
          std::lock_guard lock(shared->mu);
          cancelled = shared->cancelled;
        }
        *finished = true;
        if (*cut)
          reactor->Finish(StatusOf(**cut, v));
        else if (cancelled)
          reactor->Finish(grpc::Status(grpc::CANCELLED, "the client went away"));
        else
          reactor->Finish(grpc::Status::OK);
      });
  return reactor;
}

}  // namespace a2ad::transport::grpc_calls

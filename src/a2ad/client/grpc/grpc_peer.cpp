#include "a2ad/client/grpc/grpc_peer.hpp"

#include <absl/synchronization/mutex.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "google/rpc/status.pb.h"
#include "lf/a2a/v1/a2a.pb.h"
#include "opt/v1/opt.pb.h"
#include "pause/v1/pause.pb.h"

namespace a2ad::client {
namespace asio = boost::asio;
namespace json = boost::json;
namespace pb = google::protobuf;
using core::Error;
using core::ErrorCode;

namespace {

// The services a call's method is looked up in, in this order.
constexpr const char* kServices[] = {"lf.a2a.v1.A2AService", "a2ad.pause.v1.PauseService",
                                     "a2ad.opt.v1.OptService"};

const pb::MethodDescriptor* FindMethod(std::string_view name) {
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  for (const char* s : kServices)
    if (const pb::ServiceDescriptor* svc = pool->FindServiceByName(s))
      if (const pb::MethodDescriptor* m = svc->FindMethodByName(std::string(name))) return m;
  return nullptr;
}

const char* CodeName(grpc::StatusCode c) {
  switch (c) {
    case grpc::OK:
      return "OK";
    case grpc::CANCELLED:
      return "CANCELLED";
    case grpc::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::ABORTED:
      return "ABORTED";
    case grpc::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::INTERNAL:
      return "INTERNAL";
    case grpc::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

bool Transient(grpc::StatusCode c) {
  return c == grpc::UNAVAILABLE || c == grpc::RESOURCE_EXHAUSTED || c == grpc::DEADLINE_EXCEEDED;
}

// A status that is not OK as the error A2aClient's callers read (peer_transport.hpp).
Error StatusError(std::string_view method, const grpc::Status& st) {
  std::string message = st.error_message();
  if (message.size() > 200) message.resize(200);
  const char* code = CodeName(st.error_code());
  if (Transient(st.error_code()))
    return Error(ErrorCode::kUnavailable,
                 "the peer's " + std::string(method) + " failed over gRPC (" + code + "): " + message,
                 {{"grpcStatus", code}});
  Error e(ErrorCode::kInvalidAgentResponse,
          "the peer refused " + std::string(method) + " (" + code + ")",
          {{"peerCode", code}, {"peerMessage", message}});
  google::rpc::Status details;
  if (!st.error_details().empty() && details.ParseFromString(st.error_details()))
    for (const auto& any : details.details()) {
      google::rpc::ErrorInfo info;
      if (any.UnpackTo(&info)) e.details.emplace_back("peerReason", info.reason());
    }
  return e;
}

std::string Serialized(const grpc::ByteBuffer& buf) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buf.Dump(&slices).ok()) return out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer BufferOf(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// The JSON of a response message of `type`, from its wire bytes.
core::Result<json::value> JsonOf(const pb::Descriptor* type, const std::string& bytes,
                                 std::string_view method) {
  std::unique_ptr<pb::Message> m(pb::MessageFactory::generated_factory()->GetPrototype(type)->New());
  if (!m->ParseFromString(bytes))
    return Error(ErrorCode::kInvalidAgentResponse,
                 "the peer's " + std::string(method) + " answer is not a " + type->full_name());
  std::string text;
  pb::util::JsonPrintOptions print;
  if (!pb::util::MessageToJsonString(*m, &text, print).ok())
    return Error(ErrorCode::kInternal, "cannot print the peer's " + std::string(method) + " answer");
  auto v = protocol::ParseJson(text);
  if (!v) return std::move(v).error();
  return std::move(v).value();
}

// Where a call goes (see grpc_peer.hpp).
struct Target {
  std::string vet_url;  // http(s)://host:port, what the guard vets
  std::string host;     // the authority's host (and the TLS name)
  std::string authority;
  bool tls = true;
};

core::Result<Target> TargetOf(const PeerCard& peer) {
  std::string url = peer.url;
  Target t;
  if (url.starts_with("grpcs://") || url.starts_with("https://")) {
    url = url.substr(url.find("://") + 3);
  } else if (url.starts_with("grpc://") || url.starts_with("http://")) {
    url = url.substr(url.find("://") + 3);
    t.tls = false;
  } else if (url.find("://") != std::string::npos) {
    return Error(ErrorCode::kInvalidAgentResponse, "the peer's gRPC interface '" + peer.url +
                                                       "' is not host:port or grpc(s)://host:port");
  } else {
    t.tls = !peer.card_url.starts_with("http://");
  }
  while (url.ends_with("/")) url.pop_back();
  t.vet_url = (t.tls ? "https://" : "http://") + url;
  net::EgressPolicy any;
  any.allow_http = true;
  auto parsed = net::ParseUrl(t.vet_url, any);
  if (!parsed) return std::move(parsed).error();
  t.host = parsed->host;
  const std::string host = t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host;
  t.authority = host + ":" + std::to_string(parsed->port);
  return t;
}

// One completion handed from a gRPC thread to the awaiting coroutine.
template <class T>
struct Completion {
  std::mutex mu;
  std::optional<T> value;
  std::function<void()> resume;
  void Set(T v) {
    std::function<void()> r;
    {
      std::lock_guard lock(mu);
      value = std::move(v);
      r = std::move(resume);
    }
    if (r) r();
  }
  asio::awaitable<T> Wait() {
    co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
        [this](auto handler) {
          auto ex = asio::get_associated_executor(handler);
          auto h = std::make_shared<decltype(handler)>(std::move(handler));
          std::function<void()> r = [ex, h] { asio::post(ex, [h]() mutable { std::move (*h)(); }); };
          std::unique_lock lock(mu);
          if (value) {
            lock.unlock();
            r();
          } else {
            resume = std::move(r);
          }
        },
        asio::use_awaitable);
    std::lock_guard lock(mu);
    co_return std::move(*value);
  }
};

asio::awaitable<bool> TimerSleep(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
  co_return true;
}

void AddMetadata(grpc::ClientContext& ctx, const CallOptions& o) {
  ctx.AddMetadata("a2a-version", "1.0");
  for (const auto& [k, v] : o.headers) {
    std::string key = k;
    for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key == "a2a-version" || key == "content-type" || key == "accept") continue;
    ctx.AddMetadata(key, v);
  }
}

}  // namespace

struct GrpcPeerTransport::Impl {
  explicit Impl(const net::UrlGuard& g) : guard(g) {}
  const net::UrlGuard& guard;
  std::string roots;  // PEM of the egress CA file; "" for the system's
  std::mutex mu;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels;

  // The channel to what the guard vetted for `t` (a fresh vetting per call).
  asio::awaitable<core::Result<std::shared_ptr<grpc::Channel>>> ChannelFor(const Target& t) {
    auto vetted = co_await guard.Vet(t.vet_url);
    if (!vetted) co_return std::move(vetted).error();
    const auto& ep = vetted->endpoints.front();
    const std::string address = ep.address().is_v6()
                                    ? "ipv6:[" + ep.address().to_string() + "]:" +
                                          std::to_string(ep.port())
                                    : "ipv4:" + ep.address().to_string() + ":" +
                                          std::to_string(ep.port());
    const std::string key = (t.tls ? "tls|" : "plain|") + address + "|" + t.authority;
    std::lock_guard lock(mu);
    auto& ch = channels[key];
    if (!ch) {
      // As the server does (GrpcBinding::Listen): no Abseil lock-cycle checks in gRPC's locks.
      absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
      grpc::ChannelArguments args;
      args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, t.authority);
      std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
      if (t.tls) {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = roots;
        creds = grpc::SslCredentials(ssl);
        args.SetSslTargetNameOverride(t.host);
      }
      ch = grpc::CreateCustomChannel(address, creds, args);
    }
    co_return ch;
  }
};

core::Result<std::unique_ptr<GrpcPeerTransport>> GrpcPeerTransport::Create(
    const net::UrlGuard& guard) {
  // The generated descriptors of the services are registered when their objects are linked.
  (void)lf::a2a::v1::SendMessageRequest::descriptor();
  (void)a2ad::pause::v1::PauseTaskRequest::descriptor();
  (void)a2ad::opt::v1::CreateObjectiveRequest::descriptor();
  auto impl = std::make_unique<Impl>(guard);
  if (!guard.policy().ca_file.empty()) {
    std::ifstream in(guard.policy().ca_file);
    if (!in)
      return Error(ErrorCode::kInvalidParams,
                   "cannot read the egress CA file '" + guard.policy().ca_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    impl->roots = text.str();
  }
  return std::unique_ptr<GrpcPeerTransport>(new GrpcPeerTransport(std::move(impl)));
}

GrpcPeerTransport::GrpcPeerTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcPeerTransport::~GrpcPeerTransport() = default;

namespace {

// The request message of `m` from the JSON params.
core::Result<std::string> RequestBytes(const pb::MethodDescriptor* m, const json::object& params) {
  std::unique_ptr<pb::Message> req(
      pb::MessageFactory::generated_factory()->GetPrototype(m->input_type())->New());
  pb::util::JsonParseOptions lenient;
  lenient.ignore_unknown_fields = true;
  if (auto st = pb::util::JsonStringToMessage(protocol::SerializeJson(params), req.get(), lenient);
      !st.ok())
    return Error(ErrorCode::kInvalidParams,
                 std::string(m->name()) + " over gRPC: " + std::string(st.message()));
  return req->SerializeAsString();
}

Error WithAttempts(Error e, int attempts) {
  e.details.emplace_back("attempts", std::to_string(attempts));
  return e;
}

}  // namespace

asio::awaitable<core::Result<json::value>> GrpcPeerTransport::Call(
    const PeerCard& peer, std::string_view method10, json::object params,
    const CallOptions& options) const {
  const pb::MethodDescriptor* m = FindMethod(method10);
  if (!m)
    co_return Error(ErrorCode::kUnsupportedOperation,
                    "a2ad does not call " + std::string(method10) + " over gRPC");
  auto target = TargetOf(peer);
  if (!target) co_return std::move(target).error();
  auto bytes = RequestBytes(m, params);
  if (!bytes) co_return std::move(bytes).error();
  const std::string path = "/" + m->service()->full_name() + "/" + m->name();
  Sleeper sleep = options.sleep ? options.sleep : Sleeper(TimerSleep);
  const int attempts = std::max(1, options.retry.max_attempts);
  std::chrono::milliseconds wait = options.retry.backoff;
  for (int i = 1;; ++i) {
    auto channel = co_await impl_->ChannelFor(target.value());
    if (!channel) co_return WithAttempts(std::move(channel).error(), i);
    // Alive until the call completes (the completion holds it), whatever the coroutine does.
    struct Call {
      explicit Call(std::shared_ptr<grpc::Channel> ch) : stub(std::move(ch)) {}
      grpc::GenericStub stub;
      grpc::ClientContext ctx;
      grpc::ByteBuffer request, response;
      Completion<grpc::Status> done;
    };
    auto call = std::make_shared<Call>(channel.value());
    AddMetadata(call->ctx, options);
    call->ctx.set_deadline(std::chrono::system_clock::now() + options.timeout);
    call->request = BufferOf(bytes.value());
    call->stub.UnaryCall(&call->ctx, path, grpc::StubOptions(), &call->request, &call->response,
                         [call](grpc::Status st) { call->done.Set(std::move(st)); });
    const grpc::Status st = co_await call->done.Wait();
    if (st.ok()) {
      auto v = JsonOf(m->output_type(), Serialized(call->response), method10);
      if (!v) co_return WithAttempts(std::move(v).error(), i);
      co_return std::move(v).value();
    }
    if (!Transient(st.error_code()) || i >= attempts)
      co_return WithAttempts(StatusError(method10, st), i);
    if (!co_await sleep(std::min(wait, options.retry.max_wait)))
      co_return WithAttempts(StatusError(method10, st), i);
    wait = std::min(wait * 2, options.retry.max_wait);
  }
}

namespace {

// A server stream read by a reactor (gRPC threads) and handed to the coroutine, which waits
// for each message or the end.
class StreamReader final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  std::optional<grpc::GenericStub> stub;
  grpc::ClientContext ctx;
  grpc::ByteBuffer request;

  // Keeps itself alive until OnDone (gRPC calls into it until then).
  void Begin(std::shared_ptr<StreamReader> self) {
    self_ = std::move(self);
    StartWrite(&request);
    StartWritesDone();
    StartRead(&in_);
    StartCall();
  }
  void OnWriteDone(bool) override {}
  void OnWritesDoneDone(bool) override {}
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the end: OnDone follows
    Push(Serialized(in_));
    StartRead(&in_);
  }
  void OnDone(const grpc::Status& st) override {
    std::function<void()> r;
    std::shared_ptr<StreamReader> self;
    {
      std::lock_guard lock(mu_);
      status_ = st;
      r = std::move(resume_);
      self = std::move(self_);
    }
    if (r) r();
  }
  // The next message, or nullopt at the end (then status()).
  asio::awaitable<std::optional<std::string>> Next() {
    co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
        [this](auto handler) {
          auto ex = asio::get_associated_executor(handler);
          auto h = std::make_shared<decltype(handler)>(std::move(handler));
          std::function<void()> r = [ex, h] { asio::post(ex, [h]() mutable { std::move (*h)(); }); };
          std::unique_lock lock(mu_);
          if (!queue_.empty() || status_) {
            lock.unlock();
            r();
          } else {
            resume_ = std::move(r);
          }
        },
        asio::use_awaitable);
    std::lock_guard lock(mu_);
    if (queue_.empty()) co_return std::nullopt;
    std::string next = std::move(queue_.front());
    queue_.pop_front();
    co_return next;
  }
  // Waits for OnDone (the reactor must outlive it).
  asio::awaitable<grpc::Status> Finished() {
    for (;;) {
      {
        std::lock_guard lock(mu_);
        queue_.clear();
        if (status_) co_return *status_;
      }
      (void)co_await Next();
    }
  }

 private:
  void Push(std::string bytes) {
    std::function<void()> r;
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(bytes));
      r = std::move(resume_);
    }
    if (r) r();
  }
  grpc::ByteBuffer in_;
  std::mutex mu_;
  std::deque<std::string> queue_;
  std::optional<grpc::Status> status_;
  std::function<void()> resume_;
  std::shared_ptr<StreamReader> self_;
};

}  // namespace

asio::awaitable<core::Result<net::StreamEnd>> GrpcPeerTransport::Stream(
    const PeerCard& peer, std::string_view method10, json::object params,
    const CallOptions& options, std::chrono::milliseconds window,
    std::function<bool(const json::value& response)> on_response,
    std::string last_event_id) const {
  const pb::MethodDescriptor* m = FindMethod(method10);
  if (!m || !m->server_streaming())
    co_return Error(ErrorCode::kUnsupportedOperation,
                    "a2ad does not stream " + std::string(method10) + " over gRPC");
  auto target = TargetOf(peer);
  if (!target) co_return std::move(target).error();
  auto bytes = RequestBytes(m, params);
  if (!bytes) co_return std::move(bytes).error();
  auto channel = co_await impl_->ChannelFor(target.value());
  if (!channel) co_return std::move(channel).error();
  auto reader = std::make_shared<StreamReader>();
  AddMetadata(reader->ctx, options);
  if (!last_event_id.empty()) reader->ctx.AddMetadata("last-event-id", last_event_id);
  reader->ctx.set_deadline(std::chrono::system_clock::now() + window);
  reader->request = BufferOf(bytes.value());
  reader->stub.emplace(channel.value());
  reader->stub->PrepareBidiStreamingCall(&reader->ctx,
                                         "/" + m->service()->full_name() + "/" + m->name(),
                                         grpc::StubOptions(), reader.get());
  reader->Begin(reader);
  net::StreamEnd end;
  end.head.status = 200;
  std::optional<Error> failed;
  for (;;) {
    auto next = co_await reader->Next();
    if (!next) break;
    auto v = JsonOf(m->output_type(), *next, method10);
    if (!v) {
      failed = std::move(v).error();
      reader->ctx.TryCancel();
      break;
    }
    if (!on_response(v.value())) {
      end.how = net::StreamEnd::How::kStopped;
      reader->ctx.TryCancel();
      break;
    }
  }
  const grpc::Status st = co_await reader->Finished();
  if (failed) co_return std::move(*failed);
  if (end.how == net::StreamEnd::How::kStopped) co_return end;
  if (st.error_code() == grpc::DEADLINE_EXCEEDED) {
    end.how = net::StreamEnd::How::kWindowClosed;
    co_return end;
  }
  if (!st.ok()) co_return StatusError(method10, st);
  co_return end;
}

}  // namespace a2ad::client

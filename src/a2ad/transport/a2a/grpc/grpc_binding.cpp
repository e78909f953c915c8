#include "a2ad/transport/a2a/grpc/grpc_binding.hpp"

#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <utility>

#include "a2ad/transport/a2a/grpc/grpc_calls.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "opt/v1/opt.grpc.pb.h"
#include "pause/v1/pause.grpc.pb.h"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace v1 = lf::a2a::v1;
namespace opt = a2ad::opt::v1;
using core::Error;
using core::ErrorCode;
using grpc_calls::CallRunner;

namespace {

/// lf.a2a.v1.A2AService: each RPC is the operation of the same name.
class V10Service final : public v1::A2AService::CallbackService {
 public:
  explicit V10Service(CallRunner runner) : run_(std::move(runner)) {}

  // ---- lf.a2a.v1.A2AService ------------------------------------------------------------------
  grpc::ServerUnaryReactor* SendMessage(grpc::CallbackServerContext* c,
                                        const v1::SendMessageRequest* req,
                                        v1::SendMessageResponse* resp) override {
    return run_.Unary(c, "SendMessage", *req, resp);
  }
  grpc::ServerWriteReactor<v1::StreamResponse>* SendStreamingMessage(
      grpc::CallbackServerContext* c, const v1::SendMessageRequest* req) override {
    return run_.Streaming<v1::StreamResponse>(c, "SendStreamingMessage", *req);
  }
  grpc::ServerUnaryReactor* GetTask(grpc::CallbackServerContext* c, const v1::GetTaskRequest* req,
                                    v1::Task* resp) override {
    return run_.Unary(c, "GetTask", *req, resp);
  }
  grpc::ServerUnaryReactor* ListTasks(grpc::CallbackServerContext* c,
                                      const v1::ListTasksRequest* req,
                                      v1::ListTasksResponse* resp) override {
    return run_.Unary(c, "ListTasks", *req, resp);
  }
  grpc::ServerUnaryReactor* CancelTask(grpc::CallbackServerContext* c,
                                       const v1::CancelTaskRequest* req, v1::Task* resp) override {
    return run_.Unary(c, "CancelTask", *req, resp);
  }
  grpc::ServerWriteReactor<v1::StreamResponse>* SubscribeToTask(
      grpc::CallbackServerContext* c, const v1::SubscribeToTaskRequest* req) override {
    return run_.Streaming<v1::StreamResponse>(c, "SubscribeToTask", *req);
  }
  grpc::ServerUnaryReactor* CreateTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v1::TaskPushNotificationConfig* req,
      v1::TaskPushNotificationConfig* resp) override {
    return run_.Unary(c, "CreateTaskPushNotificationConfig", *req, resp);
  }
  grpc::ServerUnaryReactor* GetTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v1::GetTaskPushNotificationConfigRequest* req,
      v1::TaskPushNotificationConfig* resp) override {
    return run_.Unary(c, "GetTaskPushNotificationConfig", *req, resp);
  }
  grpc::ServerUnaryReactor* ListTaskPushNotificationConfigs(
      grpc::CallbackServerContext* c, const v1::ListTaskPushNotificationConfigsRequest* req,
      v1::ListTaskPushNotificationConfigsResponse* resp) override {
    return run_.Unary(c, "ListTaskPushNotificationConfigs", *req, resp);
  }
  grpc::ServerUnaryReactor* GetExtendedAgentCard(grpc::CallbackServerContext* c,
                                                 const v1::GetExtendedAgentCardRequest* req,
                                                 v1::AgentCard* resp) override {
    return run_.Unary(c, "GetExtendedAgentCard", *req, resp);
  }
  grpc::ServerUnaryReactor* DeleteTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v1::DeleteTaskPushNotificationConfigRequest* req,
      google::protobuf::Empty* resp) override {
    return run_.Unary(c, "DeleteTaskPushNotificationConfig", *req, resp);
  }

 private:
  CallRunner run_;
};

/// a2ad.pause.v1.PauseService: the pause extension's operations (ext/pause/), A2A 1.0 shapes.
/// Without the extension registered, each answers UNIMPLEMENTED (the operation is not found).
class PauseService final : public a2ad::pause::v1::PauseService::CallbackService {
 public:
  explicit PauseService(CallRunner runner) : run_(std::move(runner)) {}
  grpc::ServerUnaryReactor* PauseTask(grpc::CallbackServerContext* c,
                                      const a2ad::pause::v1::PauseTaskRequest* req,
                                      v1::Task* resp) override {
    return run_.Unary(c, "PauseTask", *req, resp);
  }
  grpc::ServerUnaryReactor* ResumeTask(grpc::CallbackServerContext* c,
                                       const a2ad::pause::v1::ResumeTaskRequest* req,
                                       v1::Task* resp) override {
    return run_.Unary(c, "ResumeTask", *req, resp);
  }
  grpc::ServerUnaryReactor* AwaitTaskResumption(
      grpc::CallbackServerContext* c, const a2ad::pause::v1::AwaitTaskResumptionRequest* req,
      v1::Task* resp) override {
    return run_.Unary(c, "AwaitTaskResumption", *req, resp);
  }

 private:
  CallRunner run_;
};

/// a2ad.opt.v1.OptService: the OPT extension's operations (ext/opt/), one RPC per method.
/// Without the extension registered, each answers UNIMPLEMENTED (the operation is not found).
class OptService final : public a2ad::opt::v1::OptService::CallbackService {
 public:
  explicit OptService(CallRunner runner) : run_(std::move(runner)) {}
  using Ctx = grpc::CallbackServerContext;
  grpc::ServerUnaryReactor* CreateObjective(Ctx* c, const opt::CreateObjectiveRequest* req,
                                            opt::ObjectiveResponse* resp) override {
    return run_.Unary(c, "objectives/create", *req, resp);
  }
  grpc::ServerUnaryReactor* GetObjective(Ctx* c, const opt::GetObjectiveRequest* req,
                                         opt::ObjectiveResponse* resp) override {
    return run_.Unary(c, "objectives/get", *req, resp);
  }
  grpc::ServerUnaryReactor* ListObjectives(Ctx* c, const opt::ListObjectivesRequest* req,
                                           opt::ListObjectivesResponse* resp) override {
    return run_.Unary(c, "objectives/list", *req, resp);
  }
  grpc::ServerUnaryReactor* UpdateObjective(Ctx* c, const opt::UpdateObjectiveRequest* req,
                                            opt::ObjectiveResponse* resp) override {
    return run_.Unary(c, "objectives/update", *req, resp);
  }
  grpc::ServerWriteReactor<opt::ObjectiveEvent>* SubscribeObjective(
      Ctx* c, const opt::SubscribeObjectiveRequest* req) override {
    return run_.Streaming<opt::ObjectiveEvent>(c, "objectives/subscribe", *req);
  }
  grpc::ServerUnaryReactor* CreatePlan(Ctx* c, const opt::CreatePlanRequest* req,
                                       opt::PlanResponse* resp) override {
    return run_.Unary(c, "plans/create", *req, resp);
  }
  grpc::ServerUnaryReactor* GetPlan(Ctx* c, const opt::GetPlanRequest* req,
                                    opt::PlanResponse* resp) override {
    return run_.Unary(c, "plans/get", *req, resp);
  }
  grpc::ServerUnaryReactor* UpdatePlan(Ctx* c, const opt::UpdatePlanRequest* req,
                                       opt::PlanResponse* resp) override {
    return run_.Unary(c, "plans/update", *req, resp);
  }
  grpc::ServerUnaryReactor* LinkTask(Ctx* c, const opt::LinkTaskRequest* req,
                                     opt::PlanTaskResponse* resp) override {
    return run_.Unary(c, "tasks/link", *req, resp);
  }
  grpc::ServerUnaryReactor* UpdateTaskStatus(Ctx* c, const opt::UpdateTaskStatusRequest* req,
                                             opt::PlanTaskResponse* resp) override {
    return run_.Unary(c, "tasks/updateStatus", *req, resp);
  }

 private:
  CallRunner run_;
};

}  // namespace

struct GrpcBinding::Impl {
  Impl(const OperationTable& ops, const asio::any_io_executor& io, const ExtensionRegistry* ext,
       bool serve_v03, Authenticator* auth)
      : v10(CallRunner(ops, io, ext, protocol::WireVersion::kV10, true, auth)),
        v03(grpc_calls::MakeV03Service(
            CallRunner(ops, io, ext, protocol::WireVersion::kV03, serve_v03, auth))),
        pause(CallRunner(ops, io, ext, protocol::WireVersion::kV10, true, auth)),
        opt(CallRunner(ops, io, ext, protocol::WireVersion::kV10, true, auth)) {}

  V10Service v10;                      // lf.a2a.v1.A2AService
  std::unique_ptr<grpc::Service> v03;  // a2a.v1.A2AService (grpc_service_v03.cpp)
  PauseService pause;                  // a2ad.pause.v1.PauseService
  OptService opt;                      // a2ad.opt.v1.OptService
  std::unique_ptr<grpc::Server> server_;
};

GrpcBinding::GrpcBinding(const OperationTable& operations, const asio::any_io_executor& io,
                         const ExtensionRegistry* extensions, bool serve_v03, Authenticator* auth)
    : impl_(std::make_unique<Impl>(operations, io, extensions, serve_v03, auth)) {}

GrpcBinding::~GrpcBinding() { Shutdown(); }

core::Result<uint16_t> GrpcBinding::Listen(const std::string& host, uint16_t port,
                                           const ServerTls* tls) {
  const std::string address =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  int selected = 0;
  // Debian builds Abseil without NDEBUG, so every absl::Mutex that gRPC locks is checked for
  // lock-order cycles under one process-wide spinlock, and a cycle it suspects aborts the
  // process. That is a debugging aid for gRPC's authors: here it cost about 2% of a gRPC
  // call's CPU, and a false report would take the server down. Release builds of Abseil
  // ignore cycles; so does a2ad (AbseilMayNotAbortTheServer in grpc_binding_test).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls) {
    grpc::SslServerCredentialsOptions options(tls->client_ca_pem.empty()
                                                  ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                                  : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
    options.pem_root_certs = tls->client_ca_pem;
    options.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_chain_pem});
    credentials = grpc::SslServerCredentials(options);
  }
  builder.AddListeningPort(address, credentials, &selected);
  builder.RegisterService(&impl_->v10);
  builder.RegisterService(impl_->v03.get());
  builder.RegisterService(&impl_->pause);
  builder.RegisterService(&impl_->opt);
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

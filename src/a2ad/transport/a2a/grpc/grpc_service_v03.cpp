// a2a.v1.A2AService, the gRPC service of A2A 0.3 (WIRE.md §9; proto/a2a/v1/a2a.proto), on the
// same server as lf.a2a.v1's. Each RPC runs the operation-table entry it names below; request
// and response messages travel as the 0.3 proto's ProtoJSON (protocol/v03/proto_json.hpp).
// TaskSubscription is SubscribeToTask (a finished task is replayed, not refused, as 0.3
// wants), ListTaskPushNotificationConfig (singular) is ListTaskPushNotificationConfigs, and
// GetAgentCard is the extended card (as the 0.3 SDK servers serve it; this agent has none).
#include "a2a/v1/a2a.grpc.pb.h"
#include "a2ad/transport/a2a/grpc/grpc_calls.hpp"

namespace a2ad::transport::grpc_calls {
namespace {
namespace v03 = ::a2a::v1;

class V03Service final : public v03::A2AService::CallbackService {
 public:
  explicit V03Service(CallRunner runner) : run_(std::move(runner)) {}

  grpc::ServerUnaryReactor* SendMessage(grpc::CallbackServerContext* c,
                                        const v03::SendMessageRequest* req,
                                        v03::SendMessageResponse* resp) override {
    return run_.Unary(c, "SendMessage", *req, resp);
  }
  grpc::ServerWriteReactor<v03::StreamResponse>* SendStreamingMessage(
      grpc::CallbackServerContext* c, const v03::SendMessageRequest* req) override {
    return run_.Streaming<v03::StreamResponse>(c, "SendStreamingMessage", *req);
  }
  grpc::ServerUnaryReactor* GetTask(grpc::CallbackServerContext* c, const v03::GetTaskRequest* req,
                                    v03::Task* resp) override {
    return run_.Unary(c, "GetTask", *req, resp);
  }
  grpc::ServerUnaryReactor* CancelTask(grpc::CallbackServerContext* c,
                                       const v03::CancelTaskRequest* req,
                                       v03::Task* resp) override {
    return run_.Unary(c, "CancelTask", *req, resp);
  }
  grpc::ServerWriteReactor<v03::StreamResponse>* TaskSubscription(
      grpc::CallbackServerContext* c, const v03::TaskSubscriptionRequest* req) override {
    return run_.Streaming<v03::StreamResponse>(c, "SubscribeToTask", *req);
  }
  grpc::ServerUnaryReactor* CreateTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v03::CreateTaskPushNotificationConfigRequest* req,
      v03::TaskPushNotificationConfig* resp) override {
    return run_.Unary(c, "CreateTaskPushNotificationConfig", *req, resp);
  }
  grpc::ServerUnaryReactor* GetTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v03::GetTaskPushNotificationConfigRequest* req,
      v03::TaskPushNotificationConfig* resp) override {
    return run_.Unary(c, "GetTaskPushNotificationConfig", *req, resp);
  }
  grpc::ServerUnaryReactor* ListTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v03::ListTaskPushNotificationConfigRequest* req,
      v03::ListTaskPushNotificationConfigResponse* resp) override {
    return run_.Unary(c, "ListTaskPushNotificationConfigs", *req, resp);
  }
  grpc::ServerUnaryReactor* GetAgentCard(grpc::CallbackServerContext* c,
                                         const v03::GetAgentCardRequest* req,
                                         v03::AgentCard* resp) override {
    return run_.Unary(c, "GetExtendedAgentCard", *req, resp);
  }
  grpc::ServerUnaryReactor* DeleteTaskPushNotificationConfig(
      grpc::CallbackServerContext* c, const v03::DeleteTaskPushNotificationConfigRequest* req,
      google::protobuf::Empty* resp) override {
    return run_.Unary(c, "DeleteTaskPushNotificationConfig", *req, resp);
  }

 private:
  CallRunner run_;
};

}  // namespace

std::unique_ptr<grpc::Service> MakeV03Service(CallRunner runner) {
  return std::make_unique<V03Service>(std::move(runner));
}

}  // namespace a2ad::transport::grpc_calls

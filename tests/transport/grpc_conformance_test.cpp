// The gRPC services (grpc_binding.hpp: lf.a2a.v1 for A2A 1.0, a2a.v1 for A2A 0.3) as
// declarative fixtures (STYLE.md #7): fixtures/grpc_errors.json is a sequence of calls made
// with the generated stubs over real HTTP/2 (tests/support/grpc_test_server.hpp), each against
// the server its "server" names (conformance.hpp ServerOptionsNamed; "default" when absent),
// created on first use and kept for the later cases naming it. A case is
//   {"name": "...", "server": "...", "service": "lf.a2a.v1" | "a2a.v1", "rpc": "GetTask",
//    "metadata": {"a2a-version": "0.3", ...}, "request": <the request message's ProtoJSON>,
//    "expect": {"code": "OK", "response": <ProtoJSON> | "stream": [<ProtoJSON>, ...]} |
//              {"code": "NOT_FOUND", "message": "...",
//               "errorInfo": {"reason": "...", "domain": "...", "metadata": {...}}},
//              "initialMetadata"?: {"a2a-extensions": "..."}}
// Every error reachable over gRPC is a case (error_coverage_test.cpp checks that per service);
// the status details are checked besides (the google.rpc.Status repeats code and message and
// holds exactly the ErrorInfo). Requests are parsed strictly: a misspelt field fails the case.
// Set A2AD_UPDATE_GOLDEN=1 to rewrite the "expect" members from the current answers (then read
// the diff before committing).
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "a2a/v1/a2a.grpc.pb.h"
#include "a2ad/protocol/json_parse.hpp"
#include "conformance.hpp"
#include "grpc_test_server.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"

namespace a2ad::transport {
namespace {
namespace json = boost::json;
namespace v10 = ::lf::a2a::v1;
namespace v03 = ::a2a::v1;

json::value JsonOf(const google::protobuf::Message& m) {
  std::string text;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &text).ok());
  auto v = protocol::ParseJson(text);
  EXPECT_TRUE(v) << text;
  return v ? std::move(v).value() : json::value();
}

template <class Req>
Req RequestOf(const json::value& request) {
  Req req;
  google::protobuf::util::JsonParseOptions strict;  // unknown fields refused
  const auto st =
      google::protobuf::util::JsonStringToMessage(json::serialize(request), &req, strict);
  EXPECT_TRUE(st.ok()) << req.GetTypeName() << ": " << st.ToString();
  return req;
}

/// One RPC: makes the call with `c` and the request, sets `st`, returns the response (unary:
/// the message; streaming: the array of messages read before the status).
using Rpc = std::function<json::value(grpc::ClientContext& c, const json::value& request,
                                      grpc::Status& st)>;

template <class Req, class Resp, class Call>
Rpc Unary(Call call) {
  return [call](grpc::ClientContext& c, const json::value& request, grpc::Status& st) {
    Resp resp;
    st = call(&c, RequestOf<Req>(request), &resp);
    return st.ok() ? JsonOf(resp) : json::value();
  };
}

template <class Req, class Resp, class Open>
Rpc Streaming(Open open) {
  return [open](grpc::ClientContext& c, const json::value& request, grpc::Status& st) {
    auto reader = open(&c, RequestOf<Req>(request));
    json::array events;
    Resp ev;
    while (reader->Read(&ev)) events.push_back(JsonOf(ev));
    st = reader->Finish();
    return json::value(std::move(events));
  };
}

/// A fixture server and every RPC of both services on it, by "<service>/<rpc>".
struct Server {
  explicit Server(testing::ServerOptions options) : grpc(options) {
    auto* s = v10_stub.get();
    rpcs["lf.a2a.v1/SendMessage"] = Unary<v10::SendMessageRequest, v10::SendMessageResponse>(
        [s](auto* c, const auto& r, auto* o) { return s->SendMessage(c, r, o); });
    rpcs["lf.a2a.v1/SendStreamingMessage"] =
        Streaming<v10::SendMessageRequest, v10::StreamResponse>(
            [s](auto* c, const auto& r) { return s->SendStreamingMessage(c, r); });
    rpcs["lf.a2a.v1/GetTask"] = Unary<v10::GetTaskRequest, v10::Task>(
        [s](auto* c, const auto& r, auto* o) { return s->GetTask(c, r, o); });
    rpcs["lf.a2a.v1/ListTasks"] = Unary<v10::ListTasksRequest, v10::ListTasksResponse>(
        [s](auto* c, const auto& r, auto* o) { return s->ListTasks(c, r, o); });
    rpcs["lf.a2a.v1/CancelTask"] = Unary<v10::CancelTaskRequest, v10::Task>(
        [s](auto* c, const auto& r, auto* o) { return s->CancelTask(c, r, o); });
    rpcs["lf.a2a.v1/SubscribeToTask"] = Streaming<v10::SubscribeToTaskRequest, v10::StreamResponse>(
        [s](auto* c, const auto& r) { return s->SubscribeToTask(c, r); });
    rpcs["lf.a2a.v1/CreateTaskPushNotificationConfig"] =
        Unary<v10::TaskPushNotificationConfig, v10::TaskPushNotificationConfig>(
            [s](auto* c, const auto& r, auto* o) {
              return s->CreateTaskPushNotificationConfig(c, r, o);
            });
    rpcs["lf.a2a.v1/GetTaskPushNotificationConfig"] =
        Unary<v10::GetTaskPushNotificationConfigRequest, v10::TaskPushNotificationConfig>(
            [s](auto* c, const auto& r, auto* o) {
              return s->GetTaskPushNotificationConfig(c, r, o);
            });
    rpcs["lf.a2a.v1/ListTaskPushNotificationConfigs"] =
        Unary<v10::ListTaskPushNotificationConfigsRequest,
              v10::ListTaskPushNotificationConfigsResponse>([s](auto* c, const auto& r, auto* o) {
          return s->ListTaskPushNotificationConfigs(c, r, o);
        });
    rpcs["lf.a2a.v1/DeleteTaskPushNotificationConfig"] =
        Unary<v10::DeleteTaskPushNotificationConfigRequest, google::protobuf::Empty>(
            [s](auto* c, const auto& r, auto* o) {
              return s->DeleteTaskPushNotificationConfig(c, r, o);
            });
    rpcs["lf.a2a.v1/GetExtendedAgentCard"] =
        Unary<v10::GetExtendedAgentCardRequest, v10::AgentCard>(
            [s](auto* c, const auto& r, auto* o) { return s->GetExtendedAgentCard(c, r, o); });

    auto* t = v03_stub.get();
    rpcs["a2a.v1/SendMessage"] = Unary<v03::SendMessageRequest, v03::SendMessageResponse>(
        [t](auto* c, const auto& r, auto* o) { return t->SendMessage(c, r, o); });
    rpcs["a2a.v1/SendStreamingMessage"] = Streaming<v03::SendMessageRequest, v03::StreamResponse>(
        [t](auto* c, const auto& r) { return t->SendStreamingMessage(c, r); });
    rpcs["a2a.v1/GetTask"] = Unary<v03::GetTaskRequest, v03::Task>(
        [t](auto* c, const auto& r, auto* o) { return t->GetTask(c, r, o); });
    rpcs["a2a.v1/CancelTask"] = Unary<v03::CancelTaskRequest, v03::Task>(
        [t](auto* c, const auto& r, auto* o) { return t->CancelTask(c, r, o); });
    rpcs["a2a.v1/TaskSubscription"] = Streaming<v03::TaskSubscriptionRequest, v03::StreamResponse>(
        [t](auto* c, const auto& r) { return t->TaskSubscription(c, r); });
    rpcs["a2a.v1/CreateTaskPushNotificationConfig"] =
        Unary<v03::CreateTaskPushNotificationConfigRequest, v03::TaskPushNotificationConfig>(
            [t](auto* c, const auto& r, auto* o) {
              return t->CreateTaskPushNotificationConfig(c, r, o);
            });
    rpcs["a2a.v1/GetTaskPushNotificationConfig"] =
        Unary<v03::GetTaskPushNotificationConfigRequest, v03::TaskPushNotificationConfig>(
            [t](auto* c, const auto& r, auto* o) {
              return t->GetTaskPushNotificationConfig(c, r, o);
            });
    rpcs["a2a.v1/ListTaskPushNotificationConfig"] =
        Unary<v03::ListTaskPushNotificationConfigRequest,
              v03::ListTaskPushNotificationConfigResponse>([t](auto* c, const auto& r, auto* o) {
          return t->ListTaskPushNotificationConfig(c, r, o);
        });
    rpcs["a2a.v1/DeleteTaskPushNotificationConfig"] =
        Unary<v03::DeleteTaskPushNotificationConfigRequest, google::protobuf::Empty>(
            [t](auto* c, const auto& r, auto* o) {
              return t->DeleteTaskPushNotificationConfig(c, r, o);
            });
    rpcs["a2a.v1/GetAgentCard"] = Unary<v03::GetAgentCardRequest, v03::AgentCard>(
        [t](auto* c, const auto& r, auto* o) { return t->GetAgentCard(c, r, o); });
  }

  testing::GrpcTestServer grpc;
  std::unique_ptr<v10::A2AService::Stub> v10_stub = v10::A2AService::NewStub(grpc.channel);
  std::unique_ptr<v03::A2AService::Stub> v03_stub = v03::A2AService::NewStub(grpc.channel);
  std::map<std::string, Rpc> rpcs;
};

std::string CodeName(grpc::StatusCode code) {
  static const std::map<grpc::StatusCode, std::string> kNames = {
      {grpc::OK, "OK"},
      {grpc::CANCELLED, "CANCELLED"},
      {grpc::UNKNOWN, "UNKNOWN"},
      {grpc::INVALID_ARGUMENT, "INVALID_ARGUMENT"},
      {grpc::DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"},
      {grpc::NOT_FOUND, "NOT_FOUND"},
      {grpc::ALREADY_EXISTS, "ALREADY_EXISTS"},
      {grpc::PERMISSION_DENIED, "PERMISSION_DENIED"},
      {grpc::RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED"},
      {grpc::FAILED_PRECONDITION, "FAILED_PRECONDITION"},
      {grpc::ABORTED, "ABORTED"},
      {grpc::OUT_OF_RANGE, "OUT_OF_RANGE"},
      {grpc::UNIMPLEMENTED, "UNIMPLEMENTED"},
      {grpc::INTERNAL, "INTERNAL"},
      {grpc::UNAVAILABLE, "UNAVAILABLE"},
      {grpc::DATA_LOSS, "DATA_LOSS"},
      {grpc::UNAUTHENTICATED, "UNAUTHENTICATED"},
  };
  auto it = kNames.find(code);
  return it == kNames.end() ? std::to_string(code) : it->second;
}

/// The answer to a case, as its "expect" records it.
json::value Answer(Server& server, const json::object& c) {
  const std::string key =
      std::string(c.at("service").as_string()) + "/" + std::string(c.at("rpc").as_string());
  auto rpc = server.rpcs.find(key);
  EXPECT_NE(rpc, server.rpcs.end()) << "no RPC " << key;
  if (rpc == server.rpcs.end()) return nullptr;
  grpc::ClientContext ctx;
  if (auto* md = c.if_contains("metadata"))
    for (const auto& kv : md->as_object())
      ctx.AddMetadata(std::string(kv.key()), std::string(kv.value().as_string()));
  const json::value* request = c.if_contains("request");
  grpc::Status st;
  json::value response = rpc->second(ctx, request ? *request : json::value(json::object()), st);
  json::object a{{"code", CodeName(st.error_code())}};
  if (st.ok()) {
    a[response.is_array() ? "stream" : "response"] = std::move(response);
  } else {
    a["message"] = st.error_message();
    const google::rpc::ErrorInfo info = testing::ErrorInfoOf(st);
    std::map<std::string, std::string> sorted(info.metadata().begin(), info.metadata().end());
    json::object metadata;
    for (const auto& [k, v] : sorted) metadata[k] = v;
    a["errorInfo"] =
        json::object{{"reason", info.reason()}, {"domain", info.domain()}, {"metadata", metadata}};
    if (response.is_array() && !response.as_array().empty()) a["stream"] = std::move(response);
  }
  json::object initial;
  for (const auto& [k, v] : ctx.GetServerInitialMetadata()) {
    const std::string name(k.data(), k.size());
    if (name == "a2a-extensions" || name == "x-a2a-extensions")
      initial[name] = std::string(v.data(), v.size());
  }
  if (!initial.empty()) a["initialMetadata"] = std::move(initial);
  return a;
}

TEST(GrpcConformance, MatchesGolden) {
  const std::filesystem::path path =
      std::filesystem::path(A2AD_SOURCE_DIR) / "tests/transport/fixtures/grpc_errors.json";
  json::value doc = json::parse(testing::ReadFile(path));
  const bool update = std::getenv("A2AD_UPDATE_GOLDEN") != nullptr;
  std::map<std::string, std::unique_ptr<Server>, std::less<>> servers;
  for (auto& c : doc.at("cases").as_array()) {
    auto& co = c.as_object();
    const std::string name(co.at("name").as_string());
    const std::string server_name =
        co.contains("server") ? std::string(co.at("server").as_string()) : "default";
    const auto options = testing::ServerOptionsNamed(server_name);
    ASSERT_TRUE(options && server_name != "http") << name << ": no server '" << server_name << "'";
    auto& server = servers[server_name];
    if (!server) server = std::make_unique<Server>(*options);
    const json::value actual = Answer(*server, co);
    if (update) {
      co["expect"] = actual;
    } else {
      ASSERT_TRUE(co.contains("expect"))
          << name << ": no expect member; run with A2AD_UPDATE_GOLDEN=1";
      EXPECT_EQ(actual, co.at("expect"))
          << "case: " << name << "\nactual: " << json::serialize(actual);
    }
  }
  if (update) {
    std::ofstream out(path);
    testing::Pretty(out, doc, 0);
    out << "\n";
  }
}

}  // namespace
}  // namespace a2ad::transport

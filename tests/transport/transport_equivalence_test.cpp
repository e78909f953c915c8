// Transport equivalence: the same A2A operations through JSON-RPC, HTTP+JSON (REST) and gRPC
// give the same results and the same errors, in 1.0 and in 0.3. Results are compared after a
// round trip through the proto message (ProtoJSON printing is canonical), with the values each
// call makes fresh (ids, timestamps) blanked; errors by their ErrorInfo reason (1.0) or
// JSON-RPC code (0.3) and the code each binding's table gives it. 0.3 JSON-RPC speaks other
// shapes than the 0.3 proto; it is compared with the other two field by field.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <future>
#include <thread>

#include "a2a/v1/a2a.grpc.pb.h"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/transport/a2a/grpc/grpc_binding.hpp"
#include "a2ad/transport/router.hpp"
#include "google/rpc/status.pb.h"
#include "lf/a2a/v1/a2a.grpc.pb.h"

namespace a2ad::transport {
namespace {
namespace json = boost::json;
namespace v1 = lf::a2a::v1;
namespace v03 = ::a2a::v1;

/// `j` through `Message` and back, with fresh-per-call values blanked.
template <class Message>
std::string Canonical(const std::string& j) {
  Message m;
  google::protobuf::util::JsonParseOptions in;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(j, &m, in).ok()) << j;
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &out).ok());
  auto v = protocol::ParseJson(out);
  EXPECT_TRUE(v);
  std::function<void(json::value&)> blank = [&](json::value& x) {
    if (x.is_object()) {
      for (auto& kv : x.get_object()) {
        const std::string_view k = kv.key();
        if (k == "id" || k == "contextId" || k == "taskId" || k == "timestamp" ||
            k == "messageId" || k == "artifactId" || k == "runId")
          kv.value() = "*";
        else
          blank(kv.value());
      }
    } else if (x.is_array()) {
      for (auto& e : x.get_array()) blank(e);
    }
  };
  blank(*v);
  // Members by name: protobuf prints a Struct's map (metadata) in no fixed order.
  std::function<json::value(const json::value&)> sorted = [&](const json::value& x) {
    if (x.is_array()) {
      json::array a;
      for (const auto& e : x.get_array()) a.push_back(sorted(e));
      return json::value(std::move(a));
    }
    if (!x.is_object()) return x;
    std::vector<std::string> keys;
    for (const auto& kv : x.get_object()) keys.emplace_back(kv.key());
    std::sort(keys.begin(), keys.end());
    json::object o;
    for (const auto& k : keys) o[k] = sorted(x.at(k));
    return json::value(std::move(o));
  };
  return protocol::SerializeJson(sorted(*v));
}

struct Answer {
  std::string result;  // the result's JSON text; "" on error
  std::string reason;  // the ErrorInfo reason on error
  int code = 0;        // JSON-RPC code, HTTP status or gRPC status
};

class TransportEquivalence : public ::testing::Test {
 protected:
  void SetUp() override {
    service_.RegisterSkill({"echo", "Echo", "echoes", {}, {}},
                           std::make_shared<tasks::EchoExecutor>());
    router_ = std::make_unique<Router>(service_, json::object{{"name", "eq"}});
    grpc_ = std::make_unique<GrpcBinding>(router_->operations(), io_.get_executor(), nullptr);
    auto port = grpc_->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port) << port.error().message;
    io_thread_ = std::thread([this] { io_.run(); });
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port.value()),
                                       grpc::InsecureChannelCredentials());
    stub_ = v1::A2AService::NewStub(channel);
    stub03_ = v03::A2AService::NewStub(channel);
  }
  void TearDown() override {
    grpc_->Shutdown();
    work_.reset();
    io_thread_.join();
  }

  HttpResponse Http(HttpRequest r) {
    std::promise<HttpResponse> done;
    boost::asio::co_spawn(io_, router_->Handle(std::move(r)),
                          [&](std::exception_ptr, HttpResponse resp) { done.set_value(resp); });
    return done.get_future().get();
  }

  Answer JsonRpc(const std::string& method, const json::object& params) {
    HttpRequest r;
    r.method = "POST";
    r.target = "/v1/a2a";
    r.headers = {{"A2A-Version", "1.0"}};
    r.body = protocol::SerializeJson(
        json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}});
    auto v = protocol::ParseJson(Http(std::move(r)).body);
    EXPECT_TRUE(v);
    Answer a;
    if (auto* res = v->as_object().if_contains("result")) {
      a.result = protocol::SerializeJson(*res);
    } else {
      a.code = static_cast<int>(v->at("error").at("code").as_int64());
      a.reason = v->at("error").at("data").at(0).at("reason").as_string();
    }
    return a;
  }

  /// A v0.3 JSON-RPC call (no A2A-Version); the error's JSON-RPC code on error.
  Answer JsonRpc03(const std::string& method, const json::object& params) {
    HttpRequest r;
    r.method = "POST";
    r.target = "/v1/a2a";
    r.body = protocol::SerializeJson(
        json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}});
    auto v = protocol::ParseJson(Http(std::move(r)).body);
    EXPECT_TRUE(v);
    Answer a;
    if (auto* res = v->as_object().if_contains("result"))
      a.result = protocol::SerializeJson(*res);
    else
      a.code = static_cast<int>(v->at("error").at("code").as_int64());
    return a;
  }

  /// A call of the 0.3 REST binding; on error `code` is the HTTP status and `reason` the
  /// body's JSON-RPC code.
  Answer Rest03(const std::string& method, const std::string& path, const std::string& body) {
    HttpRequest r;
    r.method = method;
    r.target = "/a2a/rest03" + path;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = body;
    HttpResponse resp = Http(std::move(r));
    Answer a;
    if (resp.status == 200) {
      a.result = resp.body;
    } else {
      auto v = protocol::ParseJson(resp.body);
      EXPECT_TRUE(v) << resp.body;
      a.code = resp.status;
      a.reason = std::to_string(v->at("code").as_int64());
    }
    return a;
  }

  Answer Rest(const std::string& method, const std::string& path, const std::string& body) {
    HttpRequest r;
    r.method = method;
    r.target = "/a2a/rest" + path;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = body;
    HttpResponse resp = Http(std::move(r));
    Answer a;
    if (resp.status == 200) {
      a.result = resp.body;
    } else {
      auto v = protocol::ParseJson(resp.body);
      EXPECT_TRUE(v) << resp.body;
      a.code = resp.status;
      a.reason = v->at("error").at("details").at(0).at("reason").as_string();
    }
    return a;
  }

  template <class Resp>
  static Answer FromGrpc(const grpc::Status& st, const Resp& resp) {
    Answer a;
    if (st.ok()) {
      EXPECT_TRUE(google::protobuf::util::MessageToJsonString(resp, &a.result).ok());
    } else {
      google::rpc::Status details;
      google::rpc::ErrorInfo info;
      EXPECT_TRUE(details.ParseFromString(st.error_details()));
      EXPECT_TRUE(details.details_size() == 1 && details.details(0).UnpackTo(&info));
      a.code = st.error_code();
      a.reason = info.reason();
    }
    return a;
  }

  static json::object SendParams(const std::string& message_id) {
    return json::object{
        {"message", json::object{{"messageId", message_id},
                                 {"role", "ROLE_USER"},
                                 {"parts", json::array{json::object{{"text", "same"}}}}}}};
  }

  core::ManualClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  tasks::TaskService service_{store_, clock_, *ids_, io_.get_executor(), {}};
  std::unique_ptr<Router> router_;
  std::unique_ptr<GrpcBinding> grpc_;
  std::thread io_thread_;
  std::unique_ptr<v1::A2AService::Stub> stub_;
  std::unique_ptr<v03::A2AService::Stub> stub03_;
};

TEST_F(TransportEquivalence, SendGetListAndCancelAgreeOnEveryBinding) {
  // SendMessage.
  const Answer rpc_sent = JsonRpc("SendMessage", SendParams("m-rpc"));
  const Answer rest_sent =
      Rest("POST", "/message:send", protocol::SerializeJson(SendParams("m-rest")));
  v1::SendMessageRequest req;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  protocol::SerializeJson(SendParams("m-grpc")), &req)
                  .ok());
  v1::SendMessageResponse sent;
  grpc::ClientContext c1;
  const Answer grpc_sent = FromGrpc(stub_->SendMessage(&c1, req, &sent), sent);
  ASSERT_FALSE(rpc_sent.result.empty());
  const std::string want = Canonical<v1::SendMessageResponse>(rpc_sent.result);
  EXPECT_EQ(Canonical<v1::SendMessageResponse>(rest_sent.result), want);
  EXPECT_EQ(Canonical<v1::SendMessageResponse>(grpc_sent.result), want);
  EXPECT_NE(want.find("TASK_STATE_COMPLETED"), std::string::npos) << want;

  // GetTask of each binding's own task.
  auto id_of = [](const std::string& j) {
    return std::string(protocol::ParseJson(j)->at("task").at("id").as_string());
  };
  const Answer rpc_got = JsonRpc("GetTask", json::object{{"id", id_of(rpc_sent.result)}});
  const Answer rest_got = Rest("GET", "/tasks/" + id_of(rest_sent.result), "");
  v1::GetTaskRequest get;
  get.set_id(id_of(grpc_sent.result));
  v1::Task task;
  grpc::ClientContext c2;
  const Answer grpc_got = FromGrpc(stub_->GetTask(&c2, get, &task), task);
  EXPECT_EQ(Canonical<v1::Task>(rest_got.result), Canonical<v1::Task>(rpc_got.result));
  EXPECT_EQ(Canonical<v1::Task>(grpc_got.result), Canonical<v1::Task>(rpc_got.result));

  // ListTasks: the three tasks, alike.
  const Answer rpc_list = JsonRpc("ListTasks", json::object{});
  const Answer rest_list = Rest("GET", "/tasks", "");
  v1::ListTasksResponse page;
  grpc::ClientContext c3;
  const Answer grpc_list = FromGrpc(stub_->ListTasks(&c3, v1::ListTasksRequest(), &page), page);
  const std::string list = Canonical<v1::ListTasksResponse>(rpc_list.result);
  EXPECT_EQ(Canonical<v1::ListTasksResponse>(rest_list.result), list);
  EXPECT_EQ(Canonical<v1::ListTasksResponse>(grpc_list.result), list);

  // Errors: the same reason, each binding's code for it.
  const Answer rpc_cancel = JsonRpc("CancelTask", json::object{{"id", id_of(rpc_sent.result)}});
  const Answer rest_cancel = Rest("POST", "/tasks/" + id_of(rest_sent.result) + ":cancel", "");
  v1::CancelTaskRequest cancel;
  cancel.set_id(id_of(grpc_sent.result));
  grpc::ClientContext c4;
  const Answer grpc_cancel = FromGrpc(stub_->CancelTask(&c4, cancel, &task), task);
  EXPECT_EQ(rpc_cancel.reason, "TASK_NOT_CANCELABLE");
  EXPECT_EQ(rest_cancel.reason, rpc_cancel.reason);
  EXPECT_EQ(grpc_cancel.reason, rpc_cancel.reason);
  EXPECT_EQ(rpc_cancel.code, -32002);
  EXPECT_EQ(rest_cancel.code, 409);
  EXPECT_EQ(grpc_cancel.code, grpc::FAILED_PRECONDITION);

  const Answer rpc_missing = JsonRpc("GetTask", json::object{{"id", "nope"}});
  const Answer rest_missing = Rest("GET", "/tasks/nope", "");
  get.set_id("nope");
  grpc::ClientContext c5;
  const Answer grpc_missing = FromGrpc(stub_->GetTask(&c5, get, &task), task);
  EXPECT_EQ(rpc_missing.reason, "TASK_NOT_FOUND");
  EXPECT_EQ(rest_missing.reason, "TASK_NOT_FOUND");
  EXPECT_EQ(grpc_missing.reason, "TASK_NOT_FOUND");
  EXPECT_EQ(rpc_missing.code, -32001);
  EXPECT_EQ(rest_missing.code, 404);
  EXPECT_EQ(grpc_missing.code, grpc::NOT_FOUND);
}

/// What a 0.3 task says, in either 0.3 shape: state, artifact text, the first history
/// message's id, whether it has a context.
std::string Gist03(const std::string& result) {
  auto v = protocol::ParseJson(result);
  EXPECT_TRUE(v) << result;
  const json::object* t = &v->as_object();
  if (auto* wrapped = t->if_contains("task")) t = &wrapped->as_object();
  std::string state(t->at("status").at("state").as_string());
  // JSON-RPC "completed" is the proto's "TASK_STATE_COMPLETED".
  if (!state.starts_with("TASK_STATE_")) {
    for (auto& ch : state) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(ch));
    state = "TASK_STATE_" + state;
  }
  std::string text;
  if (auto* arts = t->if_contains("artifacts"))
    for (const auto& a : arts->as_array())
      for (const auto& p : a.at("parts").as_array()) text += p.at("text").as_string();
  const auto& history = t->at("history").as_array();
  const json::object& first = history.at(0).as_object();
  const json::array& parts =
      (first.contains("content") ? first.at("content") : first.at("parts")).as_array();
  return state + " | " + text + " | " + std::string(parts.at(0).at("text").as_string()) + " | " +
         std::to_string(!t->at("contextId").as_string().empty());
}

TEST_F(TransportEquivalence, ZeroThreeSendGetAndErrorsAgreeOnEveryBinding) {
  const json::object rpc_message{
      {"kind", "message"},
      {"messageId", "m03-rpc"},
      {"role", "user"},
      {"parts", json::array{json::object{{"kind", "text"}, {"text", "same"}}}}};
  auto proto_message = [](const std::string& id) {
    return json::object{{"messageId", id},
                        {"role", "ROLE_USER"},
                        {"content", json::array{json::object{{"text", "same"}}}}};
  };
  const Answer rpc_sent = JsonRpc03("message/send", json::object{{"message", rpc_message}});
  const Answer rest_sent =
      Rest03("POST", "/v1/message:send",
             protocol::SerializeJson(json::object{{"message", proto_message("m03-rest")}}));
  v03::SendMessageRequest req;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(
          protocol::SerializeJson(json::object{{"message", proto_message("m03-grpc")}}), &req)
          .ok());
  v03::SendMessageResponse sent;
  grpc::ClientContext c1;
  const Answer grpc_sent = FromGrpc(stub03_->SendMessage(&c1, req, &sent), sent);
  ASSERT_FALSE(rpc_sent.result.empty());
  ASSERT_FALSE(rest_sent.result.empty());
  ASSERT_FALSE(grpc_sent.result.empty());
  // REST and gRPC speak the same proto: equal once fresh values are blanked.
  EXPECT_EQ(Canonical<v03::SendMessageResponse>(rest_sent.result),
            Canonical<v03::SendMessageResponse>(grpc_sent.result));
  const std::string gist = Gist03(rpc_sent.result);
  EXPECT_EQ(gist, "TASK_STATE_COMPLETED | same | same | 1");
  EXPECT_EQ(Gist03(rest_sent.result), gist);
  EXPECT_EQ(Gist03(grpc_sent.result), gist);

  auto id_of = [](const std::string& j) {
    auto v = protocol::ParseJson(j);
    const json::object& o = v->as_object();
    return std::string((o.contains("task") ? o.at("task") : *v).at("id").as_string());
  };
  const Answer rpc_got = JsonRpc03("tasks/get", json::object{{"id", id_of(rpc_sent.result)}});
  const Answer rest_got = Rest03("GET", "/v1/tasks/" + id_of(rest_sent.result), "");
  v03::GetTaskRequest get;
  get.set_name("tasks/" + id_of(grpc_sent.result));
  v03::Task task;
  grpc::ClientContext c2;
  const Answer grpc_got = FromGrpc(stub03_->GetTask(&c2, get, &task), task);
  EXPECT_EQ(Canonical<v03::Task>(rest_got.result), Canonical<v03::Task>(grpc_got.result));
  EXPECT_EQ(Gist03(rpc_got.result), gist);
  EXPECT_EQ(Gist03(rest_got.result), gist);

  // Errors: one JSON-RPC code, each binding's status for it.
  const Answer rpc_cancel = JsonRpc03("tasks/cancel", json::object{{"id", id_of(rpc_sent.result)}});
  const Answer rest_cancel = Rest03("POST", "/v1/tasks/" + id_of(rest_sent.result) + ":cancel", "");
  v03::CancelTaskRequest cancel;
  cancel.set_name("tasks/" + id_of(grpc_sent.result));
  grpc::ClientContext c3;
  const grpc::Status grpc_cancel = stub03_->CancelTask(&c3, cancel, &task);
  EXPECT_EQ(rpc_cancel.code, -32002);
  EXPECT_EQ(rest_cancel.reason, "-32002");
  EXPECT_EQ(rest_cancel.code, 409);
  EXPECT_EQ(grpc_cancel.error_code(), grpc::FAILED_PRECONDITION);
  EXPECT_TRUE(grpc_cancel.error_message().starts_with("TaskNotCancelableError: "));

  const Answer rpc_missing = JsonRpc03("tasks/get", json::object{{"id", "nope"}});
  const Answer rest_missing = Rest03("GET", "/v1/tasks/nope", "");
  get.set_name("tasks/nope");
  grpc::ClientContext c4;
  const grpc::Status grpc_missing = stub03_->GetTask(&c4, get, &task);
  EXPECT_EQ(rpc_missing.code, -32001);
  EXPECT_EQ(rest_missing.reason, "-32001");
  EXPECT_EQ(rest_missing.code, 404);
  EXPECT_EQ(grpc_missing.error_code(), grpc::NOT_FOUND);
  EXPECT_TRUE(grpc_missing.error_message().starts_with("TaskNotFoundError: "));
}

}  // namespace
}  // namespace a2ad::transport

// Hostile replies against the real binary over loopback HTTP, in both wire versions (v0.3
// message/send; v1.0 SendMessage with A2A-Version: 1.0): an answer that does not fit the
// gate is refused naming the field and appends nothing (also through REST and the interrupt
// token), and a reply retried with the same messageId is applied once and answered with the
// task. Event counts are read from GET /v1/runs/{id}/events/poll?lastSequence=-1.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;

const std::string kBinary = testing::A2adBinary();
const std::string kWorkflows = std::string(A2AD_SOURCE_DIR) + "/workflows";

// One wire version's spelling of a blocking send and of its answer.
struct Wire {
  std::string name;
  std::string method;
  std::string version;  // A2A-Version header ("" for v0.3)
  std::string input_required;
  std::string completed;
};
const Wire kV03{"v0.3", "message/send", "", "input-required", "completed"};
const Wire kV10{"v1.0", "SendMessage", "1.0", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"};

class ReplyE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-reply");
    server_ = ServerProcess::Start(kBinary, dir_.string(), {"--workflows-dir", kWorkflows});
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }

  // A blocking send of one part; `task_id` empty starts a campaign-brief task.
  json::value Send(const Wire& w, const std::string& message_id, json::object part,
                   const std::string& task_id = "") {
    json::object msg{{"messageId", message_id}, {"parts", json::array{std::move(part)}}};
    if (w.version.empty()) {
      msg["kind"] = "message";
      msg["role"] = "user";
    } else {
      msg["role"] = "ROLE_USER";
    }
    if (task_id.empty())
      msg["metadata"] = json::object{{"skillId", "campaign-brief"}};
    else
      msg["taskId"] = task_id;
    return client_->Rpc(w.method, json::object{{"message", std::move(msg)}}, w.version);
  }
  static json::object Data(const Wire& w, json::object d) {
    if (w.version.empty()) return json::object{{"kind", "data"}, {"data", std::move(d)}};
    return json::object{{"data", std::move(d)}};
  }
  static json::object Text(const Wire& w, const std::string& t) {
    if (w.version.empty()) return json::object{{"kind", "text"}, {"text", t}};
    return json::object{{"text", t}};
  }
  // The task of a successful answer (v1.0 wraps it in {task}).
  static json::object TaskOf(const Wire& w, const json::value& answer) {
    EXPECT_TRUE(answer.as_object().contains("result")) << json::serialize(answer);
    if (!answer.as_object().contains("result")) return {};
    const json::object& result = answer.at("result").as_object();
    return w.version.empty() ? result : result.at("task").as_object();
  }
  static std::string StateOf(const json::object& task) {
    return std::string(task.at("status").at("state").as_string());
  }
  // The `field` of an error answer, in either version's error data.
  static std::string FieldOf(const json::value& answer) {
    const json::value& data = answer.at("error").at("data");
    if (data.is_object()) return std::string(data.at("field").as_string());
    std::string field;
    for (const auto& d : data.as_array())
      if (d.as_object().contains("metadata") && d.at("metadata").as_object().contains("field"))
        field = d.at("metadata").at("field").as_string();
    return field;
  }
  static std::string ReasonOf(const json::value& answer) {
    const json::value& data = answer.at("error").at("data");
    if (data.is_object())
      return data.as_object().contains("reason") ? std::string(data.at("reason").as_string()) : "";
    for (const auto& d : data.as_array())
      if (d.as_object().contains("metadata") && d.at("metadata").as_object().contains("reason"))
        return std::string(d.at("metadata").at("reason").as_string());
    return "";
  }
  std::string Parked(const Wire& w, const std::string& message_id) {
    auto r = Send(w, message_id, Text(w, "Brief for Acme launch"));
    json::object task = TaskOf(w, r);
    EXPECT_EQ(StateOf(task), w.input_required) << json::serialize(r);
    return std::string(task.at("id").as_string());
  }
  std::vector<json::object> Events(const std::string& run_id) {
    auto r =
        client_->Request("GET", "/v1/runs/" + run_id + "/events/poll?lastSequence=-1&timeout=0");
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<json::object> out;
    const json::value page = r.Json();
    for (const auto& e : page.at("events").as_array()) out.push_back(e.as_object());
    return out;
  }
  static size_t Count(const std::vector<json::object>& evs, std::string_view type) {
    size_t n = 0;
    for (const auto& e : evs) n += e.at("type") == json::value(type) ? 1 : 0;
    return n;
  }
  testing::ClientResponse Post(const std::string& target, const json::value& body) {
    return client_->Request("POST", target, json::serialize(body),
                            {{"Content-Type", "application/json"}});
  }

  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

// Issue repro 1: {"action": "edit-accept", "editedArtifactData": 5} completed the gate.
TEST_F(ReplyE2E, AnAnswerThatDoesNotFitIsRefusedNamingTheFieldAndAppendsNothing) {
  for (const Wire* w : {&kV03, &kV10}) {
    SCOPED_TRACE(w->name);
    const std::string id = Parked(*w, "brief-" + w->name);
    const size_t logged = Events(id).size();
    auto bad = Send(*w, "edit-" + w->name,
                    Data(*w, {{"action", "edit-accept"}, {"editedArtifactData", 5}}), id);
    ASSERT_TRUE(bad.as_object().contains("error")) << json::serialize(bad);
    EXPECT_EQ(bad.at("error").at("code"), -32602);
    EXPECT_EQ(FieldOf(bad), "editedArtifactData");
    EXPECT_EQ(ReasonOf(bad), "validation_error");
    const std::string message(bad.at("error").at("message").as_string());
    EXPECT_EQ(message.rfind("editedArtifactData: ", 0), 0u) << message;
    auto scope = Send(
        *w, "scope-" + w->name,
        Data(*w, {{"action", "refine"}, {"refineFeedback", json::object{{"scope", "chapter"}}}}),
        id);
    EXPECT_EQ(FieldOf(scope), "refineFeedback.scope") << json::serialize(scope);
    EXPECT_EQ(Events(id).size(), logged);
    auto got = client_->Rpc(w->version.empty() ? "tasks/get" : "GetTask", json::object{{"id", id}},
                            w->version);
    EXPECT_EQ(StateOf(got.at("result").as_object()), w->input_required);
    // The right edit completes it.
    auto ok = Send(*w, "edit-ok-" + w->name,
                   Data(*w, {{"action", "edit-accept"},
                             {"editedArtifactData", json::object{{"brief", "Acme, Q3"}}}}),
                   id);
    EXPECT_EQ(StateOf(TaskOf(*w, ok)), w->completed) << json::serialize(ok);
  }
}

TEST_F(ReplyE2E, RestAndTokenAnswersAreCheckedTheSameWay) {
  const std::string id = Parked(kV03, "brief-rest");
  const size_t logged = Events(id).size();
  auto rest = Post("/v1/runs/" + id + "/interrupts/review",
                   json::object{{"resumeValue", json::object{{"action", "edit-accept"},
                                                             {"editedArtifactData", 5}}}});
  EXPECT_EQ(rest.status, 400) << rest.body;
  EXPECT_EQ(rest.Json().at("error"), "validation_error");
  EXPECT_EQ(rest.Json().at("details").at("field"), "editedArtifactData");
  const json::value run = client_->Request("GET", "/v1/runs/" + id).Json();
  const std::string token(run.at("interrupt").at("interruptToken").as_string());
  auto by_token = Post(
      "/v1/interrupts/" + token,
      json::object{{"resumeValue", json::object{{"action", "refine"}, {"refineFeedback", 1}}}});
  EXPECT_EQ(by_token.status, 400) << by_token.body;
  EXPECT_EQ(by_token.Json().at("details").at("field"), "refineFeedback");
  EXPECT_EQ(Events(id).size(), logged);
  EXPECT_EQ(client_->Request("GET", "/v1/runs/" + id).Json().at("status"), "waiting-approval");
}

// Issue repro 2: {"action": "ask"} three times with one messageId gave three asks; the retry
// of the reply that closed the gate got -32004.
TEST_F(ReplyE2E, ARetriedReplyIsAppliedOnceAndAnsweredWithTheTask) {
  for (const Wire* w : {&kV03, &kV10}) {
    SCOPED_TRACE(w->name);
    const std::string id = Parked(*w, "brief-" + w->name);
    for (int i = 0; i < 3; ++i) {
      auto ask = Send(*w, "ask-" + w->name, Data(*w, {{"action", "ask"}}), id);
      json::object task = TaskOf(*w, ask);
      EXPECT_EQ(task.at("id"), json::value(id));
      EXPECT_EQ(StateOf(task), w->input_required);
    }
    auto evs = Events(id);
    EXPECT_EQ(Count(evs, "a2ad.approval.asked"), 1u);
    EXPECT_EQ(Count(evs, "a2a.message.received"), 1u);

    auto accepted = Send(*w, "accept-" + w->name, Data(*w, {{"action", "accept"}}), id);
    EXPECT_EQ(StateOf(TaskOf(*w, accepted)), w->completed);
    const size_t logged = Events(id).size();
    auto again = Send(*w, "accept-" + w->name, Data(*w, {{"action", "accept"}}), id);
    ASSERT_TRUE(again.as_object().contains("result")) << json::serialize(again);  // not -32004
    EXPECT_EQ(TaskOf(*w, again), TaskOf(*w, accepted));
    // The same messageId with other content is another message: into the finished task,
    // refused as any new message is.
    auto reused = Send(*w, "accept-" + w->name, Data(*w, {{"action", "reject"}}), id);
    ASSERT_TRUE(reused.as_object().contains("error")) << json::serialize(reused);
    EXPECT_EQ(reused.at("error").at("code"), -32004);
    evs = Events(id);
    EXPECT_EQ(evs.size(), logged);
    EXPECT_EQ(Count(evs, "approval.received"), 1u);
    EXPECT_EQ(Count(evs, "a2a.message.received"), 2u);
    EXPECT_EQ(Count(evs, "run.completed"), 1u);
  }
}

TEST_F(ReplyE2E, TheRetryMayComeInTheOtherWireVersion) {
  const std::string id = Parked(kV03, "brief-cross");
  EXPECT_EQ(StateOf(TaskOf(kV03, Send(kV03, "x-ask", Data(kV03, {{"action", "ask"}}), id))),
            kV03.input_required);
  auto retry = Send(kV10, "x-ask", Data(kV10, {{"action", "ask"}}), id);
  EXPECT_EQ(StateOf(TaskOf(kV10, retry)), kV10.input_required) << json::serialize(retry);
  EXPECT_EQ(Count(Events(id), "a2ad.approval.asked"), 1u);
  // Internal bookkeeping stays out of the public run snapshot.
  EXPECT_FALSE(
      client_->Request("GET", "/v1/runs/" + id).Json().as_object().contains("acceptedMessages"));
}

// Issue 29, 1: a client that lost the answer to its first message retries it verbatim, after
// it (or anyone) answered the gate, on another connection, in the other wire version, and
// after the server was killed and restarted: every retry is answered with the first task,
// and no second run starts.
TEST_F(ReplyE2E, ALateRetryOfAFirstMessageIsAnsweredWithItsTaskEvenAfterARestart) {
  const std::string id = Parked(kV03, "brief-late");
  auto accepted = Send(kV03, "accept-late", Data(kV03, {{"action", "accept"}}), id);
  ASSERT_EQ(StateOf(TaskOf(kV03, accepted)), kV03.completed) << json::serialize(accepted);
  auto count_tasks = [&](HttpClient& c) {
    auto list = c.Rpc("ListTasks", json::object{{"pageSize", 100}}, "1.0");
    return list.at("result").at("tasks").as_array().size();
  };
  const size_t tasks = count_tasks(*client_);
  auto expect_first_task = [&](HttpClient& c, const Wire& w) {
    json::object msg{{"messageId", "brief-late"},
                     {"parts", json::array{Text(w, "Brief for Acme launch")}},
                     {"metadata", json::object{{"skillId", "campaign-brief"}}}};
    if (w.version.empty()) {
      msg["kind"] = "message";
      msg["role"] = "user";
    } else {
      msg["role"] = "ROLE_USER";
    }
    auto again = c.Rpc(w.method, json::object{{"message", std::move(msg)}}, w.version);
    json::object task = TaskOf(w, again);
    EXPECT_EQ(task.at("id"), json::value(id)) << json::serialize(again);
    EXPECT_EQ(StateOf(task), w.completed);
  };
  {
    HttpClient other("127.0.0.1", server_.port);  // another connection
    expect_first_task(other, kV03);
    expect_first_task(other, kV10);
  }
  expect_first_task(*client_, kV03);
  server_.Kill(SIGKILL);
  server_ = ServerProcess::Start(kBinary, dir_.string(), {"--workflows-dir", kWorkflows});
  HttpClient after("127.0.0.1", server_.port);
  expect_first_task(after, kV03);
  expect_first_task(after, kV10);
  EXPECT_EQ(count_tasks(after), tasks);
  client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  auto evs = Events(id);
  EXPECT_EQ(Count(evs, "run.started"), 1u);
  EXPECT_EQ(Count(evs, "run.completed"), 1u);
}

}  // namespace
}  // namespace a2ad

// The hostile-input report against the real server binary: a number beyond a double (and
// the parser's other edge cases) on every surface that takes JSON is refused with a clear
// error naming the field, and afterwards lists, other callers and a restart are unaffected.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <filesystem>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;

std::string Send(const std::string& message_id, const std::string& parts,
                 const std::string& metadata, const std::string& task_id = "") {
  return R"({"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":")" +
         message_id + R"(","role":"user",)" +
         (task_id.empty() ? "" : R"("taskId":")" + task_id + R"(",)") + R"("parts":)" + parts +
         R"(,"metadata":)" + metadata + "}}}";
}

class PoisonInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-poison");
    Start();
  }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start() {
    server_ =
        ServerProcess::Start(testing::A2adBinary(), dir_.string(),
                             {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows"});
  }
  // Everything a caller reads still reads.
  void ExpectHealthy(HttpClient& c, size_t tasks) {
    auto runs = c.Request("GET", "/v1/runs");
    EXPECT_EQ(runs.status, 200) << runs.body;
    auto list = c.Rpc("ListTasks", json::object{}, "1.0");
    ASSERT_TRUE(list.as_object().contains("result")) << json::serialize(list);
    EXPECT_EQ(list.at("result").at("tasks").as_array().size(), tasks);
  }

  fs::path dir_;
  ServerProcess server_;
};

TEST_F(PoisonInput, NumbersBeyondADoubleAreRefusedEverywhereAndPoisonNothing) {
  HttpClient c("127.0.0.1", server_.port);
  // The report's request, word for word.
  auto r = c.Request(
      "POST", "/v1/a2a",
      Send("poison-1", R"([{"kind":"text","text":"b"},{"kind":"data","data":{"a":-1e999}}])",
           R"({"skillId":"campaign-brief"})"));
  ASSERT_EQ(r.status, 200);
  auto err = r.Json().at("error");
  EXPECT_EQ(err.at("code"), -32602);
  EXPECT_EQ(err.at("data").at("field"), "params.message.parts[1].data.a");
  EXPECT_EQ(r.Json().at("id"), 1);

  struct Case {
    std::string body;
    std::string field;
  };
  const std::vector<Case> rpc_cases = {
      {Send("poison-2", R"([{"kind":"text","text":"b"}])",
            R"({"skillId":"campaign-brief","n":1e400})"),
       "params.message.metadata.n"},
      {Send("poison-3", R"([{"kind":"data","data":{"delayMs":-1e999}}])",
            R"({"skillId":"long-delay"})"),
       "params.message.parts[0].data.delayMs"},
      {Send("poison-4", R"([{"kind":"data","data":{"big":1234567890123456789012345}}])", R"({})"),
       "params.message.parts[0].data.big"},
      {Send("poison-5", R"([{"kind":"text","text":"a","text":"b"}])", R"({})"),
       "params.message.parts[0].text"},
  };
  for (const auto& k : rpc_cases) {
    auto res = c.Request("POST", "/v1/a2a", k.body);
    auto e = res.Json().at("error");
    EXPECT_EQ(e.at("code"), -32602) << res.body;
    EXPECT_EQ(e.at("data").at("field"), json::value(k.field)) << res.body;
  }

  // A gate answer carrying one: refused, the gate still open.
  auto gated = c.Request("POST", "/v1/a2a",
                         Send("gate-1", R"([{"kind":"text","text":"Acme launch"}])",
                              R"({"skillId":"campaign-brief"})"));
  auto task = gated.Json().at("result");
  ASSERT_EQ(task.at("status").at("state"), "input-required") << gated.body;
  const std::string task_id(task.at("id").as_string());
  auto reply =
      c.Request("POST", "/v1/a2a",
                Send("gate-2", R"([{"kind":"data","data":{"action":"accept","feedback":1e999}}])",
                     "{}", task_id));
  EXPECT_EQ(reply.Json().at("error").at("code"), -32602) << reply.body;
  auto still = c.Rpc("tasks/get", json::object{{"id", task_id}});
  EXPECT_EQ(still.at("result").at("status").at("state"), "input-required");

  // The REST surface names the field too.
  for (const std::string body : {R"({"workflowId":"long-delay","inputs":{"delayMs":1e999}})",
                                 R"({"workflowId":"long-delay","metadata":{"x":-1e999}})"}) {
    auto rest = c.Request("POST", "/v1/runs", body);
    EXPECT_EQ(rest.status, 400) << rest.body;
    EXPECT_EQ(rest.Json().at("error"), "validation_error") << rest.body;
    EXPECT_TRUE(rest.Json().at("details").as_object().contains("field")) << rest.body;
  }
  auto hook =
      c.Request("POST", "/v1/webhooks",
                R"({"url":"https://hooks.example.com/x","events":["run.completed"],"n":1e999})");
  EXPECT_EQ(hook.status, 400) << hook.body;

  // Two tasks: the gated run, and the brief-drafter task it asked the host itself for.
  ExpectHealthy(c, 2);
  server_.Kill(SIGKILL);
  ASSERT_NO_THROW(Start());
  HttpClient after("127.0.0.1", server_.port);
  ExpectHealthy(after, 2);
}

// Issue 35: a lone surrogate escape in a data part is refused naming the field (-32602 /
// 400 validation_error), as the README promises, not as a syntax error at a byte offset.
TEST_F(PoisonInput, ALoneSurrogateIsRefusedNamingTheField) {
  HttpClient c("127.0.0.1", server_.port);
  auto r = c.Request("POST", "/v1/a2a",
                     Send("sur-1", R"([{"kind":"data","data":{"x":"a\ud800b"}}])", "{}"),
                     {{"Content-Type", "application/json"}});
  const json::value v = r.Json();
  EXPECT_EQ(v.at("error").at("code"), -32602) << r.body;
  EXPECT_EQ(v.at("error").at("data").at("field"), "params.message.parts[0].data.x") << r.body;
  auto rest = c.Request("POST", "/v1/runs", R"({"workflowId":"long-delay","inputs":{"x":"\udc00"}})",
                        {{"Content-Type", "application/json"}});
  EXPECT_EQ(rest.status, 400) << rest.body;
  EXPECT_EQ(rest.Json().at("details").at("field"), "inputs.x") << rest.body;
  ExpectHealthy(c, 0);
}

}  // namespace
}  // namespace a2ad

// The server's log through the real binary (issue 18): with --log-format json every line is
// one JSON object with time, level and msg; each request is one line (method, route, status,
// ms, operation, task, the JSON-RPC error code, principal, the traceparent's trace id); a
// run's start, its gate raised and answered and its end are lines of their own, joined to the
// requests by `task`; probes are not logged; the text format carries the same fields as
// key=value.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "http_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

class Logs : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-logs"); }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(const std::string& format) {
    server_ = testing::ServerProcess::Start(
        testing::A2adBinary(), dir_.string(),
        {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows", "--log-format", format},
        (dir_ / "server.log").string());
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_.port);
  }
  // The log's lines, once `complete` holds of them (the log is written after the answer).
  std::vector<std::string> Lines(
      const std::function<bool(const std::vector<std::string>&)>& complete) {
    return testing::PollUntil(
        [&] {
          std::ifstream in(dir_ / "server.log");
          std::vector<std::string> out;
          for (std::string line; std::getline(in, line);) out.push_back(line);
          return out;
        },
        complete);
  }
  // Whether one of `lines` holds each of `parts`.
  static bool HasLine(const std::vector<std::string>& lines, std::vector<std::string> parts) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
      return std::all_of(parts.begin(), parts.end(),
                         [&](const std::string& p) { return line.find(p) != std::string::npos; });
    });
  }
  json::value Send(const json::object& message, const std::string& trace = "") {
    std::vector<std::pair<std::string, std::string>> h{{"Content-Type", "application/json"}};
    if (!trace.empty()) h.emplace_back("traceparent", trace);
    json::object req{{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "message/send"},
                     {"params", json::object{{"message", message}}}};
    return json::parse(client_->Request("POST", "/v1/a2a", json::serialize(req), h).body);
  }
  fs::path dir_;
  testing::ServerProcess server_;
  std::unique_ptr<testing::HttpClient> client_;
};

json::object Message(const std::string& id, json::object extra) {
  json::object m{{"kind", "message"},
                 {"messageId", id},
                 {"role", "user"},
                 {"parts", json::array{json::object{{"kind", "text"}, {"text", "spring launch"}}}}};
  for (auto& [k, v] : extra) m[k] = v;
  return m;
}

TEST_F(Logs, JsonLinesTellEachRequestAndEachStepOfARun) {
  Start("json");
  const std::string trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  json::value task = Send(Message("m1", json::object{{"metadata", json::object{{"skillId", "campaign-brief"}}}}),
                          trace)
                         .at("result");
  const std::string id(task.at("id").as_string());
  ASSERT_EQ(task.at("status").at("state"), "input-required") << task;
  Send(Message("m2", json::object{{"taskId", id},
                                  {"parts", json::array{json::object{
                                                {"kind", "data"},
                                                {"data", json::object{{"action", "accept"}}}}}}}));
  client_->Rpc("tasks/get", json::object{{"id", "no-such-task"}});
  ASSERT_EQ(client_->Request("GET", "/readyz").status, 200);
  // A signed interrupt token in a path is a credential: logged as {token}.
  const std::string token = "eyJydW5JZCI6InIxIn0.c2lnbmF0dXJlc2lnbmF0dXJlc2ln";
  client_->Request("GET", "/v1/interrupts/" + token);
  // (the last request's line, and the run's end, which is logged after its answer)
  auto complete = [&](const std::vector<std::string>& lines) {
    return HasLine(lines, {"\"/v1/interrupts/{token}\""}) &&
           HasLine(lines, {"\"run completed\"", id});
  };
  std::vector<json::object> entries;
  for (const auto& line : Lines(complete)) {
    if (line.starts_with("a2ad: serving")) continue;  // the ready line (stdout) is not in it
    json::value v;
    ASSERT_NO_THROW(v = json::parse(line)) << "not JSON: " << line;
    ASSERT_TRUE(v.is_object()) << line;
    for (const char* k : {"time", "level", "msg"}) ASSERT_TRUE(v.as_object().contains(k)) << line;
    entries.push_back(v.as_object());
  }
  auto find = [&](const std::string& msg, const std::string& key, const std::string& value) {
    for (const auto& e : entries)
      if (e.at("msg") == msg.c_str() && e.contains(key) && e.at(key) == value.c_str()) return e;
    ADD_FAILURE() << "no \"" << msg << "\" line with " << key << "=" << value;
    return json::object{};
  };
  json::object first = find("request", "task", id);
  EXPECT_EQ(first.at("method"), "POST");
  EXPECT_EQ(first.at("route"), "/v1/a2a");
  EXPECT_EQ(first.at("status"), 200);
  EXPECT_EQ(first.at("operation"), "message/send");
  EXPECT_EQ(first.at("traceId"), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_TRUE(first.at("ms").is_double());
  EXPECT_EQ(first.at("principal"), "default/anonymous");
  json::object refused = find("request", "task", "no-such-task");
  EXPECT_EQ(refused.at("error"), "-32001");
  EXPECT_EQ(find("run started", "task", id).at("skill"), "campaign-brief");
  EXPECT_EQ(find("gate raised", "task", id).at("kind"), "approval");
  find("gate answered", "task", id);
  EXPECT_TRUE(find("run completed", "task", id).at("ms").is_int64());
  for (const auto& e : entries)
    EXPECT_FALSE(e.contains("route") && e.at("route") == "/readyz") << "probes are not logged";
  EXPECT_EQ(find("request", "route", "/v1/interrupts/{token}").at("method"), "GET");
  // Every request line names an operation: a REST route without one of its own, its family.
  for (const auto& e : entries)
    if (e.at("msg") == "request") {
      EXPECT_FALSE(e.at("operation").as_string().empty()) << json::serialize(e);
      EXPECT_TRUE(e.contains("client")) << json::serialize(e);
    }
  for (const auto& line : Lines(complete)) EXPECT_EQ(line.find(token), std::string::npos) << line;
}

TEST_F(Logs, TextLinesCarryTheSameFieldsAsKeyValue) {
  Start("text");
  json::value task = Send(Message("t1", json::object{{"metadata", json::object{{"skillId", "echo"}}}}));
  const std::string id(task.at("result").at("id").as_string());
  bool found = false;
  for (const auto& line : Lines([&](const std::vector<std::string>& lines) {
         return HasLine(lines, {" request ", "task=" + id});
       }))
    if (line.find(" request ") != std::string::npos && line.find("task=" + id) != std::string::npos) {
      found = true;
      EXPECT_NE(line.find(" info request method=POST route=/v1/a2a status=200 ms="),
                std::string::npos)
          << line;
      EXPECT_NE(line.find("operation=message/send"), std::string::npos) << line;
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace a2ad

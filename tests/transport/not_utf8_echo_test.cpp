// Answers that echo bytes of a header, a method or a path (which can be anything) are still
// JSON a strict reader accepts: the writer spells bytes that are not UTF-8 as U+FFFD. Found
// by tests/fuzz/event_cursor_fuzz and rest_fuzz (corpus: regress-not-utf8-*).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/router.hpp"
#include "in_process_router.hpp"

namespace a2ad::transport {
namespace {

struct Server : testing::InProcessRouter {
  Server() { router = std::make_unique<Router>(service, boost::json::object{{"name", "t"}}); }
};

HttpRequest Rpc(std::string body, std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/a2a";
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

TEST(NotUtf8Echo, AnswersStayStrictJson) {
  Server s;
  const std::string send =
      R"({"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message",)"
      R"("messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]}}})";
  ASSERT_EQ(s.Call(Rpc(send, {})).status, 200);
  const std::string resubscribe =
      R"({"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"id-0001"}})";
  const std::string get = R"({"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"x"}})";
  HttpRequest not_found;
  not_found.method = "\xf0\xc5";
  not_found.target = "/no/\xff\xfe";
  for (HttpRequest r :
       {Rpc(resubscribe, {{"Last-Event-ID", "\x80\n"}}), Rpc(get, {{"A2A-Version", "\xff.0"}}),
        Rpc(get, {{"Content-Type", "text/\xc3"}}), not_found}) {
    HttpResponse resp = s.Call(r);
    std::string_view body = resp.body;  // a v0.3 stream's error: one event
    if (resp.content_type == "text/event-stream" && body.starts_with("event: error\ndata: "))
      body = body.substr(std::string_view("event: error\ndata: ").size());
    auto v = protocol::ParseJson(body);
    ASSERT_TRUE(v) << v.error().message << ": " << resp.body;
    EXPECT_NE(resp.body.find("\xef\xbf\xbd"), std::string::npos) << resp.body;  // U+FFFD
  }
}

}  // namespace
}  // namespace a2ad::transport

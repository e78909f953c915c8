// client::SseReader: the event-stream format as peers write it (LF, CRLF, CR; comments as
// keep-alives; multi-line data; ids), pieces cut anywhere, and the limit.
#include "a2ad/client/sse_reader.hpp"

#include <gtest/gtest.h>

#include "a2ad/client/a2a_client.hpp"
#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::client {
namespace {

std::vector<SseEvent> Read(std::string_view text, size_t piece = 0) {
  SseReader r;
  std::vector<SseEvent> out;
  if (piece == 0) {
    EXPECT_TRUE(r.Feed(text, out));
  } else {
    for (size_t i = 0; i < text.size(); i += piece) EXPECT_TRUE(r.Feed(text.substr(i, piece), out));
  }
  return out;
}

TEST(SseReader, ReadsEventsWhateverTheLineEndsAndWhereverTheBytesAreCut) {
  const std::string text =
      ": keep-alive\n\nid: 1\ndata: {\"a\":1}\n\nid: 2\r\nevent: update\r\ndata: line one\r\n"
      "data:line two\r\n\r\ndata: cr\r\rretry: 10\n\n";
  for (size_t piece : {0, 1, 2, 3, 7}) {
    auto events = Read(text, piece);
    ASSERT_EQ(events.size(), 3u) << piece;
    EXPECT_EQ(events[0].id, "1");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].id, "2");
    EXPECT_EQ(events[1].event, "update");
    EXPECT_EQ(events[1].data, "line one\nline two") << "data lines join with LF";
    EXPECT_EQ(events[2].data, "cr");
    EXPECT_EQ(events[2].id, "2") << "the last id stays in force";
  }
}

TEST(SseReader, AnEventWithoutDataIsNotDispatchedAndAnUnfinishedOneWaits) {
  EXPECT_TRUE(Read("id: 5\nevent: x\n\n").empty());
  EXPECT_TRUE(Read("data: half").empty()) << "no blank line yet";
}

TEST(SseReader, AnEventPastTheLimitSpendsTheReader) {
  SseReader r(16);
  std::vector<SseEvent> out;
  EXPECT_TRUE(r.Feed("data: 0123456789\n", out));
  EXPECT_FALSE(r.Feed("data: 0123456789\n\n", out));
  EXPECT_FALSE(r.Feed("\n", out)) << "spent: a hostile stream is dropped, not resumed";
  EXPECT_TRUE(out.empty());
}

TEST(SseReader, StreamEventsOfBothVersionsNormalize) {
  auto ev = [](std::string_view json) {
    return NormalizeStreamEvent(protocol::ParseJson(json).value());
  };
  auto s03 = ev(R"({"kind":"status-update","taskId":"t","status":{"state":"input-required"},
                    "final":true})");
  EXPECT_EQ(s03.at("kind"), "status");
  EXPECT_EQ(s03.at("state"), "input-required");
  EXPECT_EQ(s03.at("final"), true);
  auto s10 = ev(R"({"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"}}})");
  EXPECT_EQ(s10.at("state"), "working");
  EXPECT_EQ(s10.at("final"), false);
  auto t10 = ev(R"({"task":{"id":"t","status":{"state":"TASK_STATE_CANCELLED"}}})");
  EXPECT_EQ(t10.at("kind"), "task");
  EXPECT_EQ(t10.at("task").at("state"), "canceled");
  EXPECT_EQ(ev(R"({"artifactUpdate":{"taskId":"t","artifact":{"parts":[]}}})").at("kind"),
            "artifact");
  EXPECT_EQ(ev(R"({"kind":"message","messageId":"m","parts":[]})").at("kind"), "message");
  EXPECT_EQ(ev("[1]").at("kind"), "unknown");
}

}  // namespace
}  // namespace a2ad::client

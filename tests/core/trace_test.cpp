// W3C traceparent reading and writing, and spans (core/trace.hpp).
#include "a2ad/core/trace.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace a2ad::core {
namespace {

TEST(TraceParent, ReadsTheRecommendationsExample) {
  auto p = TraceParent::Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(p->span_id, "00f067aa0ba902b7");
  EXPECT_TRUE(p->sampled());
  EXPECT_EQ(p->Format(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  auto unsampled = TraceParent::Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled);
  EXPECT_FALSE(unsampled->sampled());
}

TEST(TraceParent, RefusesWhatIsNotOne) {
  for (const char* bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",          // no flags
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",      // 00: exactly 55
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",       // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",       // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",       // zero span id
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // version ff
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // separator
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",       // not hex
           "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",      // later version, no '-'
       })
    EXPECT_FALSE(TraceParent::Parse(bad)) << bad;
  // A later version is read by its first four fields.
  auto later = TraceParent::Parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what");
  ASSERT_TRUE(later);
  EXPECT_EQ(later->Format(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
}

TEST(Span, AChildHasItsParentsTraceAndARootAFreshOne) {
  std::vector<SpanData> seen;
  SetSpanSink([&seen](SpanData s) { seen.push_back(std::move(s)); });
  {
    Span parent("parent", SpanKind::kServer,
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    parent.Set("k", int64_t{7});
    Span child("child", SpanKind::kClient, parent.Context());
    child.Fail("boom");
    child.End();
    Span root("root", SpanKind::kInternal, "not a traceparent");
  }
  SetSpanSink({});
  ASSERT_EQ(seen.size(), 3u);
  const SpanData& child = seen[0];
  const SpanData& root = seen[1];
  const SpanData& parent = seen[2];
  EXPECT_EQ(parent.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(parent.parent_span_id, "00f067aa0ba902b7");
  EXPECT_EQ(child.trace_id, parent.trace_id);
  EXPECT_EQ(child.parent_span_id, parent.span_id);
  EXPECT_TRUE(child.error);
  EXPECT_EQ(child.status_message, "boom");
  EXPECT_NE(root.trace_id, parent.trace_id);
  EXPECT_EQ(root.parent_span_id, "");
  EXPECT_EQ(root.trace_id.size(), 32u);
  EXPECT_EQ(root.span_id.size(), 16u);
  EXPECT_LE(parent.start_unix_ns, parent.end_unix_ns);
  ASSERT_EQ(parent.attributes.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(parent.attributes[0].second), 7);
}

TEST(Span, NothingIsRecordedWithoutASinkOrForAnUnsampledTrace) {
  std::vector<SpanData> seen;
  { Span s("no sink", SpanKind::kInternal, ""); }
  SetSpanSink([&seen](SpanData s) { seen.push_back(std::move(s)); });
  {
    Span s("unsampled", SpanKind::kInternal,
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    // Its context still goes on, unsampled: the caller's decision travels.
    EXPECT_TRUE(s.Context().ends_with("-00"));
  }
  SetSpanSink({});
  EXPECT_TRUE(seen.empty());
}

}  // namespace
}  // namespace a2ad::core

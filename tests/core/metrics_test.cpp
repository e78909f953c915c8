// The metrics registry (core/metrics.hpp): the Prometheus text it writes, histogram buckets,
// label escaping, scrape-time collectors and the bound on a family's label sets.
#include "a2ad/core/metrics.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace a2ad::core {
namespace {

using Type = MetricsRegistry::Type;

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

TEST(Metrics, CountersAndGaugesAreWrittenWithHelpTypeAndLabels) {
  MetricsRegistry r;
  auto& c = r.Family("t_requests_total", Type::kCounter, "Requests.", {"op", "status"});
  c.Add({"message/send", "200"});
  c.Add({"message/send", "200"}, 2);
  c.Add({"tasks/get", "404"});
  auto& g = r.Family("t_open", Type::kGauge, "Open things.");
  g.Add({}, 5);
  g.Add({}, -2);
  const std::string text = r.Expose();
  EXPECT_TRUE(Has(text, "# HELP t_requests_total Requests.")) << text;
  EXPECT_TRUE(Has(text, "# TYPE t_requests_total counter")) << text;
  EXPECT_TRUE(Has(text, R"(t_requests_total{op="message/send",status="200"} 3)")) << text;
  EXPECT_TRUE(Has(text, R"(t_requests_total{op="tasks/get",status="404"} 1)")) << text;
  EXPECT_TRUE(Has(text, "# TYPE t_open gauge")) << text;
  EXPECT_TRUE(Has(text, "t_open 3")) << text;
  // Families in name order.
  EXPECT_LT(text.find("t_open"), text.find("t_requests_total"));
}

TEST(Metrics, HistogramBucketsAreCumulativeWithSumAndCount) {
  MetricsRegistry r;
  auto& h = r.Family("t_seconds", Type::kHistogram, "Latency.", {"op"}, {0.1, 1});
  h.Observe({"a"}, 0.05);
  h.Observe({"a"}, 0.5);
  h.Observe({"a"}, 7);
  const std::string text = r.Expose();
  EXPECT_TRUE(Has(text, R"(t_seconds_bucket{op="a",le="0.1"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(t_seconds_bucket{op="a",le="1"} 2)")) << text;
  EXPECT_TRUE(Has(text, R"(t_seconds_bucket{op="a",le="+Inf"} 3)")) << text;
  EXPECT_TRUE(Has(text, R"(t_seconds_sum{op="a"} 7.55)")) << text;
  EXPECT_TRUE(Has(text, R"(t_seconds_count{op="a"} 3)")) << text;
}

TEST(Metrics, LabelValuesAreEscaped) {
  MetricsRegistry r;
  r.Family("t_x", Type::kGauge, "X.", {"v"}).Set({"a\"b\\c\nd"}, 1);
  EXPECT_TRUE(Has(r.Expose(), R"(t_x{v="a\"b\\c\nd"} 1)"));
}

TEST(Metrics, CollectorsRunAtEveryScrape) {
  MetricsRegistry r;
  auto& g = r.Family("t_rows", Type::kGauge, "Rows.");
  int scrapes = 0;
  r.OnScrape([&] { g.Set({}, ++scrapes * 10); });
  EXPECT_TRUE(Has(r.Expose(), "t_rows 10"));
  EXPECT_TRUE(Has(r.Expose(), "t_rows 20"));
}

TEST(Metrics, AFamilyHoldsABoundedNumberOfLabelSets) {
  MetricsRegistry r;
  auto& c = r.Family("t_paths_total", Type::kCounter, "Paths.", {"path"});
  const size_t extra = 100;
  for (size_t i = 0; i < MetricFamily::kMaxSeries + extra; ++i) c.Add({"/p" + std::to_string(i)});
  c.Add({"/p0"});  // one seen before still counts on its own
  const std::string text = r.Expose();
  EXPECT_TRUE(Has(text, R"(t_paths_total{path="/p0"} 2)")) << text.substr(0, 400);
  EXPECT_TRUE(Has(text, R"(t_paths_total{path="other"} )" + std::to_string(extra)))
      << text.substr(text.size() - 400);
  EXPECT_EQ(text.find("/p" + std::to_string(MetricFamily::kMaxSeries + 1) + "\""),
            std::string::npos);
}

TEST(Metrics, ConcurrentRecordingLosesNothing) {
  MetricsRegistry r;
  auto& c = r.Family("t_n_total", Type::kCounter, "N.", {"k"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&c] {
      for (int i = 0; i < 10000; ++i) c.Add({(i % 2) ? "odd" : "even"}, 1);
    });
  for (auto& t : threads) t.join();
  const std::string text = r.Expose();
  EXPECT_TRUE(Has(text, R"(t_n_total{k="even"} 40000)")) << text;
  EXPECT_TRUE(Has(text, R"(t_n_total{k="odd"} 40000)")) << text;
}

}  // namespace
}  // namespace a2ad::core

#pragma once
// Metrics (issue 18): counters, gauges and histograms with labels, exposed in the Prometheus
// text format (version 0.0.4) at GET /metrics. One process-wide registry, like the logger:
// modules record into it where things happen (a request answered, a batch committed, a push
// attempted), and a family is declared once with its help text. Names follow the Prometheus
// conventions: a2ad_ prefix, base units (seconds, bytes), _total for counters.
//
// Label values are bounded by whoever records them (an operation name, a status, a state: never
// an id), and each family holds at most kMaxSeries label sets whatever is recorded. A family's
// label names are fixed at its declaration; a recording passes the values in the same order.
//
// Thread safety: every member may be called from any thread at once. Recording into a label
// set seen before takes a shared lock and an atomic add; the first recording of a new label
// set takes the registry's lock once.
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace a2ad::core {

class MetricFamily;

class MetricsRegistry {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  /// Declares a family (idempotent: the same name answers the same family). `buckets` are the
  /// upper bounds of a histogram, ascending.
  MetricFamily& Family(std::string name, Type type, std::string help,
                       std::vector<std::string> label_names = {},
                       std::vector<double> buckets = {});
  /// Runs `collect` at every exposition, first (a gauge read from elsewhere: a table's size).
  void OnScrape(std::function<void()> collect);
  /// The Prometheus text exposition of every family, sorted by name.
  std::string Expose();

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<MetricFamily>, std::less<>> families_;
  std::vector<std::function<void()>> collectors_;
};

class MetricFamily {
 public:
  /// Label sets one family holds at most; later new ones are recorded as "other".
  static constexpr size_t kMaxSeries = 512;

  /// Counter: adds `v` (>= 0). Gauge: adds `v` (may be negative). Histogram: observes `v`.
  void Add(std::initializer_list<std::string_view> labels, double v = 1);
  void Observe(std::initializer_list<std::string_view> labels, double v) { Add(labels, v); }
  /// Gauge: sets the value.
  void Set(std::initializer_list<std::string_view> labels, double v);

 private:
  friend class MetricsRegistry;
  struct Series {
    std::atomic<double> value{0};                      // counter, gauge; histogram sum
    std::atomic<uint64_t> count{0};                    // histogram
    std::unique_ptr<std::atomic<uint64_t>[]> buckets;  // histogram, one per bound
  };
  MetricFamily(std::string name, MetricsRegistry::Type type, std::string help,
               std::vector<std::string> labels, std::vector<double> buckets);
  Series& At(std::initializer_list<std::string_view> labels);
  void Append(std::string& out);

  const std::string name_;
  const MetricsRegistry::Type type_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
  // A label set as given to Add/Set, padded with "" to the family's labels: found in series_
  // without building a key (one lookup per request and metric).
  struct LabelView {
    std::initializer_list<std::string_view> values;
    size_t width;
    std::string_view operator[](size_t i) const {
      return i < values.size() ? values.begin()[i] : std::string_view();
    }
  };
  struct LabelsLess {
    using is_transparent = void;
    bool operator()(const std::vector<std::string>& a, const std::vector<std::string>& b) const {
      return a < b;
    }
    bool operator()(const std::vector<std::string>& a, const LabelView& b) const;
    bool operator()(const LabelView& a, const std::vector<std::string>& b) const;
  };
  std::shared_mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Series>, LabelsLess> series_;
};

/// The process's registry.
MetricsRegistry& Metrics();

/// Latency buckets in seconds, 0.5 ms .. 10 s.
std::vector<double> LatencyBuckets();

}  // namespace a2ad::core

#include "a2ad/core/metrics.hpp"

#include <cmath>
#include <cstdio>

namespace a2ad::core {

namespace {

// A label value as the exposition format writes it: backslash, quote and newline escaped.
void AppendLabelValue(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

void AppendNumber(std::string& out, double v) {
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.9g", v);
  out += buf;
}

// {a="x",b="y"} (with `extra` appended: le="0.5"); "" when there are no labels.
std::string Labels(const std::vector<std::string>& names, const std::vector<std::string>& values,
                   std::string_view extra_name = {}, std::string_view extra_value = {}) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += out.empty() ? "{" : ",";
    out += names[i];
    out += "=\"";
    AppendLabelValue(out, values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    out += out.empty() ? "{" : ",";
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  if (!out.empty()) out += '}';
  return out;
}

}  // namespace

MetricFamily::MetricFamily(std::string name, MetricsRegistry::Type type, std::string help,
                           std::vector<std::string> labels, std::vector<double> buckets)
    : name_(std::move(name)),
      type_(type),
      help_(std::move(help)),
      label_names_(std::move(labels)),
      bounds_(std::move(buckets)) {}

bool MetricFamily::LabelsLess::operator()(const std::vector<std::string>& a,
                                          const LabelView& b) const {
  for (size_t i = 0; i < b.width; ++i)  // stored keys are as wide as the family's labels
    if (const int c = std::string_view(a[i]).compare(b[i]); c != 0) return c < 0;
  return false;
}

bool MetricFamily::LabelsLess::operator()(const LabelView& a,
                                          const std::vector<std::string>& b) const {
  for (size_t i = 0; i < a.width; ++i)
    if (const int c = a[i].compare(b[i]); c != 0) return c < 0;
  return false;
}

MetricFamily::Series& MetricFamily::At(std::initializer_list<std::string_view> labels) {
  {
    std::shared_lock lock(mu_);
    if (auto it = series_.find(LabelView{labels, label_names_.size()}); it != series_.end())
      return *it->second;
  }
  std::vector<std::string> key(labels.begin(), labels.end());
  key.resize(label_names_.size());
  std::unique_lock lock(mu_);
  // A bounded family: past kMaxSeries label sets, new ones count together under "other" (a
  // label value a caller chose must never grow the registry without end).
  if (series_.size() >= kMaxSeries && !series_.contains(key))
    for (auto& v : key) v = "other";
  auto& s = series_[key];
  if (!s) {
    s = std::make_unique<Series>();
    if (type_ == MetricsRegistry::Type::kHistogram) {
      s->buckets = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size());
      for (size_t i = 0; i < bounds_.size(); ++i) s->buckets[i] = 0;
    }
  }
  return *s;
}

void MetricFamily::Add(std::initializer_list<std::string_view> labels, double v) {
  Series& s = At(labels);
  s.value.fetch_add(v, std::memory_order_relaxed);
  if (type_ != MetricsRegistry::Type::kHistogram) return;
  s.count.fetch_add(1, std::memory_order_relaxed);
  for (size_t i = 0; i < bounds_.size(); ++i)
    if (v <= bounds_[i]) s.buckets[i].fetch_add(1, std::memory_order_relaxed);
}

void MetricFamily::Set(std::initializer_list<std::string_view> labels, double v) {
  At(labels).value.store(v, std::memory_order_relaxed);
}

void MetricFamily::Append(std::string& out) {
  static constexpr const char* kTypes[] = {"counter", "gauge", "histogram"};
  out += "# HELP " + name_ + " " + help_ + "\n";
  out += "# TYPE " + name_ + " " + kTypes[static_cast<int>(type_)] + "\n";
  std::shared_lock lock(mu_);
  for (const auto& [values, s] : series_) {
    if (type_ != MetricsRegistry::Type::kHistogram) {
      out += name_ + Labels(label_names_, values) + " ";
      AppendNumber(out, s->value.load(std::memory_order_relaxed));
      out += '\n';
      continue;
    }
    for (size_t i = 0; i < bounds_.size(); ++i) {
      std::string le;
      AppendNumber(le, bounds_[i]);
      out += name_ + "_bucket" + Labels(label_names_, values, "le", le) + " ";
      AppendNumber(out, static_cast<double>(s->buckets[i].load(std::memory_order_relaxed)));
      out += '\n';
    }
    const double count = static_cast<double>(s->count.load(std::memory_order_relaxed));
    out += name_ + "_bucket" + Labels(label_names_, values, "le", "+Inf") + " ";
    AppendNumber(out, count);
    out += '\n' + name_ + "_sum" + Labels(label_names_, values) + " ";
    AppendNumber(out, s->value.load(std::memory_order_relaxed));
    out += '\n' + name_ + "_count" + Labels(label_names_, values) + " ";
    AppendNumber(out, count);
    out += '\n';
  }
}

MetricFamily& MetricsRegistry::Family(std::string name, Type type, std::string help,
                                      std::vector<std::string> label_names,
                                      std::vector<double> buckets) {
  std::lock_guard lock(mu_);
  auto& f = families_[name];
  if (!f)
    f.reset(new MetricFamily(std::move(name), type, std::move(help), std::move(label_names),
                             std::move(buckets)));
  return *f;
}

void MetricsRegistry::OnScrape(std::function<void()> collect) {
  std::lock_guard lock(mu_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::Expose() {
  std::vector<std::function<void()>> collectors;
  {
    std::lock_guard lock(mu_);
    collectors = collectors_;
  }
  for (const auto& c : collectors) c();
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& [name, f] : families_) f->Append(out);
  return out;
}

MetricsRegistry& Metrics() {
  static MetricsRegistry* registry = new MetricsRegistry();  // never destroyed: used to the end
  return *registry;
}

std::vector<double> LatencyBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

}  // namespace a2ad::core

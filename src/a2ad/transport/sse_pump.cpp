#include "a2ad/transport/sse_pump.hpp"

#include "a2ad/core/metrics.hpp"

#include <algorithm>
#include <memory>
#include <utility>

namespace a2ad::transport {
namespace asio = boost::asio;
using core::Error;
using core::ErrorCode;

namespace {

// A stream that fell behind catches up with few syscalls: what is already queued goes out in
// one write, up to this many bytes.
constexpr size_t kMaxCoalescedBytes = 256 * 1024;

}  // namespace

core::MetricFamily& StreamsOpen() {
  static auto& open = core::Metrics().Family(
      "a2ad_streams_open", core::MetricsRegistry::Type::kGauge,
      "Streams being served (SSE on JSON-RPC and REST, gRPC server streams).");
  return open;
}

asio::awaitable<void> PumpStream(SseSink& sink, tasks::StreamStart start, SsePumpSpec spec) {
  core::MetricFamily& open = StreamsOpen();
  open.Add({}, 1);
  struct Closed {
    core::MetricFamily& f;
    ~Closed() { f.Add({}, -1); }
  } closed{open};
  auto sub = start.subscription;  // null for a stream that is only its backlog
  auto stopping = std::make_shared<bool>(false);
  sink.OnClientGone([sub] {
    if (sub) sub->Close();
  });
  sink.OnServerStopping([sub, stopping] {
    *stopping = true;
    if (sub) sub->Close();
  });
  int64_t last = start.last_sequence;
  for (const auto& item : start.backlog) {
    if (std::string text = spec.frame(*item); !text.empty())
      if (!co_await sink.Write(std::move(text))) co_return;
    last = std::max(last, item->sequence);
    if (spec.closes(*item)) co_return;
  }
  if (start.task_terminal || !sub) co_return;
  for (;;) {
    tasks::StreamItemPtr item = co_await sub->Next(spec.heartbeat);
    if (!item) {
      if (sub->closed()) {
        const std::string resume = std::to_string(last);
        std::string why;
        if (*stopping)
          why = "server is shutting down; resubscribe with Last-Event-ID: " + resume;
        else if (sub->overflowed())
          why = "stream closed: this client fell more than " + std::to_string(sub->capacity()) +
                " events behind; resubscribe with Last-Event-ID: " + resume;
        if (!why.empty() && spec.cut_short)
          if (std::string text =
                  spec.cut_short(Error(ErrorCode::kUnavailable, why, {{"lastEventId", resume}}));
              !text.empty())
            co_await sink.Write(std::move(text));
        co_return;
      }
      if (!co_await sink.Write(spec.keep_alive)) co_return;
      continue;
    }
    if (item->sequence <= last) continue;  // already sent from the backlog
    last = item->sequence;
    std::string batch = spec.frame(*item);
    bool end = spec.closes(*item);
    while (!end && batch.size() < kMaxCoalescedBytes) {
      tasks::StreamItemPtr more = sub->TryNext();
      if (!more) break;
      if (more->sequence <= last) continue;
      last = more->sequence;
      batch += spec.frame(*more);
      end = spec.closes(*more);
    }
    if (!batch.empty())
      if (!co_await sink.Write(std::move(batch))) co_return;
    if (end) co_return;
  }
}

HttpResponse SseResponse(tasks::StreamStart start, SsePumpSpec spec) {
  HttpResponse r;
  r.content_type = "text/event-stream";
  auto shared = std::make_shared<std::pair<tasks::StreamStart, SsePumpSpec>>(std::move(start),
                                                                             std::move(spec));
  r.stream = [shared](SseSink& sink) {
    return PumpStream(sink, std::move(shared->first), std::move(shared->second));
  };
  return r;
}

}  // namespace a2ad::transport

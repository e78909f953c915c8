#include "a2ad/transport/http/sse_pump.hpp"

#include <algorithm>
#include <memory>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <utility>

#include "a2ad/core/metrics.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
using core::Error;
using core::ErrorCode;

namespace {

// A stream that fell behind catches up with few syscalls: what is already queued goes out in
// one write, up to this many bytes (or items, for a sink that takes items).
constexpr size_t kMaxCoalescedBytes = size_t{256} * 1024;
constexpr size_t kMaxCoalescedItems = 256;

// What one write of PumpStream carries: frames (SsePumpSpec::frame), or the items themselves
// for a sink that writes them (SsePumpSpec::keeps).
class Pending {
 public:
  explicit Pending(const SsePumpSpec& spec) : spec_(spec) {}
  void Add(const tasks::StreamItemPtr& item) {
    if (!spec_.keeps)
      text_ += spec_.frame(*item);
    else if (spec_.keeps(*item))
      items_.push_back(item);
  }
  bool full() const {
    return text_.size() >= kMaxCoalescedBytes || items_.size() >= kMaxCoalescedItems;
  }
  /// Writes what was added (nothing when nothing was); false once the client is gone.
  asio::awaitable<bool> Flush(SseSink& sink) {
    if (!text_.empty()) co_return co_await sink.Write(std::exchange(text_, {}));
    if (!items_.empty()) co_return co_await sink.WriteItems(std::exchange(items_, {}));
    co_return true;
  }

 private:
  const SsePumpSpec& spec_;
  std::string text_;
  std::vector<tasks::StreamItemPtr> items_;
};

}  // namespace

asio::awaitable<bool> SseSink::WriteItems(std::vector<tasks::StreamItemPtr>) { co_return false; }

asio::awaitable<bool> SseSink::Waiting() { co_return true; }

core::MetricFamily& StreamsOpen() {
  static auto& open = core::Metrics().Family(
      "a2ad_streams_open", core::MetricsRegistry::Type::kGauge,
      "Streams being served (SSE on JSON-RPC and REST, gRPC server streams).");
  return open;
}

namespace {

// One window of a batched stream.
struct Batch {
  std::string docs;  // JSON texts joined by ','
  int64_t last = -1;
  bool empty() const { return docs.empty(); }
  void Add(const SsePumpSpec& spec, const tasks::StreamItem& item) {
    std::string doc = spec.batch_item(item);
    if (doc.empty()) return;
    if (!docs.empty()) docs += ',';
    docs += doc;
    last = std::max(last, item.sequence);
  }
  std::string Take() {
    std::string out = "id: " + std::to_string(last) + "\nevent: batch\ndata: [" + docs + "]\n\n";
    docs.clear();
    return out;
  }
};

// PumpStream with spec.buffer > 0 (SsePumpSpec: batching).
asio::awaitable<void> PumpBatched(SseSink& sink, tasks::StreamStart& start, const SsePumpSpec& spec) {
  auto sub = start.subscription;
  int64_t last = start.last_sequence;
  Batch batch;
  for (const auto& item : start.backlog) {
    batch.Add(spec, *item);
    last = std::max(last, item->sequence);
    if (spec.closes(*item)) break;
  }
  const bool over = !start.backlog.empty() && spec.closes(*start.backlog.back());
  const bool only_backlog = over || start.task_terminal || !sub;
  if (only_backlog) sink.Ending();
  if (!batch.empty())
    if (!co_await sink.Write(batch.Take())) co_return;
  if (only_backlog || !co_await sink.Waiting()) co_return;
  // No window open: wait for an item (or the heartbeat). A window open: take what arrives,
  // looking every few milliseconds (a flush is sent at once), until it ends. (Next's timeout
  // is the heartbeat's, measured from the last item: not a window's.)
  using Clock = std::chrono::steady_clock;
  constexpr auto kLook = std::chrono::milliseconds(10);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    tasks::StreamItemPtr item = co_await sub->Next(spec.heartbeat);
    if (!item) {
      if (sub->closed()) co_return;
      if (!co_await sink.Write(spec.keep_alive)) co_return;
      continue;
    }
    const auto window_ends = Clock::now() + spec.buffer;
    bool end = false, flush = false;
    for (;;) {
      if (item && item->sequence > last) {
        last = item->sequence;
        batch.Add(spec, *item);
        end = spec.closes(*item);
        flush = end || (spec.flushes && spec.flushes(*item));
        if (flush) break;
      }
      item = sub->TryNext();
      if (item) continue;
      if (sub->closed() || Clock::now() >= window_ends) break;
      timer.expires_after(std::min<Clock::duration>(kLook, window_ends - Clock::now()));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (end) sink.Ending();
    if (!batch.empty())
      if (!co_await sink.Write(batch.Take())) co_return;
    if (end || sub->closed()) co_return;
  }
}

}  // namespace

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
  if (spec.buffer.count() > 0) {
    co_await PumpBatched(sink, start, spec);
    co_return;
  }
  int64_t last = start.last_sequence;
  Pending out(spec);
  bool ended = false;
  for (const auto& item : start.backlog) {
    out.Add(item);
    last = std::max(last, item->sequence);
    if ((ended = spec.closes(*item))) break;
  }
  const bool only_backlog = ended || start.task_terminal || !sub;
  if (only_backlog) sink.Ending();
  if (!co_await out.Flush(sink) || only_backlog) co_return;
  if (!co_await sink.Waiting()) co_return;
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
              !text.empty()) {
            sink.Ending();
            co_await sink.Write(std::move(text));
          }
        co_return;
      }
      if (!co_await sink.Write(spec.keep_alive)) co_return;
      continue;
    }
    if (item->sequence <= last) continue;  // already sent from the backlog
    last = item->sequence;
    out.Add(item);
    bool end = spec.closes(*item);
    while (!end && !out.full()) {
      tasks::StreamItemPtr more = sub->TryNext();
      if (!more) break;
      if (more->sequence <= last) continue;
      last = more->sequence;
      out.Add(more);
      end = spec.closes(*more);
    }
    if (end) sink.Ending();
    if (!co_await out.Flush(sink)) co_return;
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

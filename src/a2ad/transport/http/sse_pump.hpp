#pragma once
// The one SSE writer: every stream this server sends (A2A message/stream, SendStreamingMessage,
// tasks/resubscribe, SubscribeToTask; OpenWOP GET /v1/runs/{id}/events) is a tasks::StreamStart
// (a backlog, then live items from a Subscription) written by PumpStream. What differs per
// surface is how one item is framed, which item ends the stream, the keep-alive comment and
// what is said when the server cuts the stream short; the loop (backlog, then live items
// deduplicated by log sequence, heartbeats, coalescing a queue that built up into one write,
// client-gone and server-stopping) is here once.
//
// Thread safety: PumpStream runs as one coroutine on the connection's executor (the HTTP
// server runs `HttpResponse::stream` there); the spec's functions are called on it.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "a2ad/core/metrics.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/tasks/subscription.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

struct SsePumpSpec {
  /// The SSE text for one item ("id: ...\ndata: ...\n\n"); "" to send nothing for it (the
  /// cursor still moves past it).
  std::function<std::string(const tasks::StreamItem&)> frame;
  /// Set for a sink that writes items itself (SseSink::WriteItems; the gRPC binding of A2A
  /// 1.0): `frame` is not used, and the items this keeps are handed over as they are.
  std::function<bool(const tasks::StreamItem&)> keeps;
  /// True when the stream ends after this item.
  std::function<bool(const tasks::StreamItem&)> closes;
  /// The last event when the server ends the stream early: `why` is kUnavailable with a
  /// message and a `lastEventId` detail (the client resumes from there); "" sends nothing.
  /// Unset: nothing is sent.
  std::function<std::string(const core::Error& why)> cut_short;
  /// Sent on a stream idle for `heartbeat` (proxies keep it open).
  std::string keep_alive = ": keep-alive\n\n";
  std::chrono::milliseconds heartbeat{15000};
  /// Batching (OpenWOP bufferMs): when `buffer` > 0, `frame` is not used; the items of each
  /// window of `buffer` (from the first item in it) are sent as one `event: batch` whose
  /// data is the JSON array of their `batch_item` texts ("" leaves an item out) and whose id
  /// is the highest sequence in it. An item `flushes` (or `closes`) sends the window at once.
  /// The backlog is sent as one batch.
  std::chrono::milliseconds buffer{0};
  std::function<std::string(const tasks::StreamItem&)> batch_item;
  std::function<bool(const tasks::StreamItem&)> flushes;
};

/// The gauge of streams being served (a2ad_streams_open; app/metrics_setup.hpp).
core::MetricFamily& StreamsOpen();

/// Writes `start` to `sink` as `spec` says until the stream ends, the client leaves or the
/// server stops.
boost::asio::awaitable<void> PumpStream(SseSink& sink, tasks::StreamStart start, SsePumpSpec spec);

/// An HttpResponse (text/event-stream) whose stream is PumpStream(start, spec).
HttpResponse SseResponse(tasks::StreamStart start, SsePumpSpec spec);

}  // namespace a2ad::transport

#pragma once
// DeliveryWorker: delivers outbox rows at least once (issue 5; ARCHITECTURE.md step 8).
//
// Loop: every poll interval (or sooner after WakeUp) it reads the due pending rows (oldest
// first) and starts a delivery coroutine for each, unless that row is already in flight.
// One attempt:
//   1. the row is claimed in memory (no second attempt of it starts meanwhile); nothing is
//      written first, so after a crash during the attempt the row is simply still due;
//   2. the row's target gives the destination and credentials: kind "a2a" the task's push
//      config (token, authentication), kind "webhook" the OpenWOP subscription (HMAC
//      secret: X-openwop-Signature v1 over "<timestamp>.<body>"); a target deleted since
//      is a dead letter;
//   3. the URL is vetted again by the guard (fresh DNS; connect only to its answer): the
//      client's Fetch (net/http_client.hpp), redirects never followed;
//   4. a fresh JWT (jti unique per attempt; claims iss, aud = the URL, iat, exp, jti,
//      taskId, eventId) is signed; headers X-A2A-Notification-Token, Authorization,
//      X-A2A-Event-Id (stable across attempts: receivers de-duplicate on it);
//   5. POST (timeouts and the answer's size limit from DeliveryOptions; the answer's body is
//      not used); 2xx marks the row delivered. Anything else (refused by the guard, a name
//      that does not resolve, connect error, timeout, 3xx, 4xx, 5xx) is a failed attempt:
//      retried after
//      min(max_backoff, base_backoff * 2^(attempts-1)) with jitter (uniform in [d/2, d]),
//      until max_attempts, then dead-lettered (state dead, last_error kept, one warning
//      log line; listed by PushStore::ListDead and the task's deliveries).
// Isolation: at most `per_destination` attempts run at once per host:port and at most
// `max_in_flight` overall. A row whose destination is busy waits in that destination's
// in-memory queue (up to `max_waiting_per_destination`; polls read past claimed rows, so
// rows for other destinations are never hidden behind them) and starts the moment a slot of
// its destination frees; past the queue it is deferred by `busy_defer`. A slow or dead webhook thus
// occupies only its own slots and queue and never holds back deliveries to others.
//
// Ownership: `store`, `client`, `keys`, `clock` and `ids` are held by reference and must
// outlive the worker, which must be owned by a shared_ptr (its methods use shared_from_this).
//
// Thread safety: Stop, WakeUp, delivered() and dead_lettered() may be called from any
// thread; Start once. The poll loop runs on a strand of `io` and the deliveries on `io`
// itself, so `store`, `client` and `keys` are used from several threads at once; the
// worker's shared state is guarded by one mutex. Backoff is pure but for drawing from `rng`.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/metrics.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/storage/push_store.hpp"

namespace a2ad::push {

struct DeliveryOptions {
  int max_attempts = 8;
  std::chrono::milliseconds base_backoff{1000};
  std::chrono::milliseconds max_backoff{300000};
  std::chrono::milliseconds poll_interval{50};
  std::chrono::milliseconds busy_defer{1000};
  size_t per_destination = 8;
  size_t max_waiting_per_destination = 4096;
  size_t max_in_flight = 256;
  size_t batch = 256;  // rows read per poll
  std::string issuer;  // JWT iss (the server's public base URL)
  int64_t token_lifetime_s = 300;
  // One attempt's HTTP exchange (net::HttpRequest).
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds total_timeout{10000};  // connect to response
  size_t max_response_bytes = size_t{64} * 1024;   // the answer's body is read, never used
  std::string user_agent = "a2ad-push/1";          // OpenWOP webhooks send their own
};

/// The delay before attempt `attempts + 1` (attempts >= 1), jitter drawn from `rng`.
std::chrono::milliseconds Backoff(const DeliveryOptions& o, int attempts, std::mt19937_64& rng);

/// The counter of delivery attempts by outcome (a2ad_push_attempts_total; app/metrics_setup.hpp).
core::MetricFamily& PushAttempts();

class DeliveryWorker : public std::enable_shared_from_this<DeliveryWorker> {
 public:
  /// `client` vets every attempt's URL with its guard (the one PushService vets with).
  DeliveryWorker(boost::asio::any_io_executor io, storage::PushStore& store,
                 const net::HttpClient& client, KeyStore& keys, const core::Clock& clock,
                 core::IdGenerator& ids, DeliveryOptions options);
  ~DeliveryWorker();

  /// Starts the loop (call once, on a shared_ptr).
  void Start();
  /// Webhook rows (kind "webhook") are delivered through `client` (its guard: the webhooks'
  /// switches); unset: the push client. Call before Start.
  void SetWebhookClient(const net::HttpClient& client) { webhook_client_ = &client; }
  /// Stops polling; attempts in flight finish or are abandoned with the io_context (their
  /// lease makes them due again after a restart). Thread-safe.
  void Stop();
  /// Polls soon (new rows were committed). Thread-safe.
  void WakeUp();

  uint64_t delivered() const { return delivered_.load(); }
  uint64_t dead_lettered() const { return dead_.load(); }

 private:
  struct Attempt {
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string failure;  // non-empty: no POST this time
    bool permanent = false;
  };
  Attempt PrepareAttempt(const storage::OutboxRow& row);
  void FlushOutcomes();
  struct Outcome {
    storage::OutboxRow row;
    std::string destination;
  };
  boost::asio::awaitable<void> Loop();
  boost::asio::awaitable<void> Deliver(storage::OutboxRow row, std::string destination);
  void Finish(const std::string& row_id, const std::string& destination);

  boost::asio::any_io_executor io_;
  storage::PushStore& store_;
  const net::HttpClient& client_;
  const net::HttpClient* webhook_client_ = nullptr;
  KeyStore& keys_;
  const core::Clock& clock_;
  core::IdGenerator& ids_;
  DeliveryOptions options_;
  boost::asio::steady_timer timer_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> woken_{false};
  std::mutex mu_;
  std::set<std::string> claimed_;                                  // row ids running or waiting
  std::map<std::string, size_t> per_destination_;                  // running attempts per host:port
  std::map<std::string, std::deque<storage::OutboxRow>> waiting_;  // for a slot
  size_t active_ = 0;                                              // running attempts
  std::vector<Outcome> outcomes_;  // attempts done, not yet written (one transaction each flush)
  bool flush_scheduled_ = false;
  std::mt19937_64 rng_;
  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> dead_{0};
};

}  // namespace a2ad::push

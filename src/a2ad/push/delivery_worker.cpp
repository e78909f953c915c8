#include "a2ad/push/delivery_worker.hpp"


#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <optional>

#include "a2ad/core/log.hpp"
#include "a2ad/core/metrics.hpp"
#include "a2ad/core/trace.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/push/push_service.hpp"

namespace a2ad::push {
namespace asio = boost::asio;
namespace json = boost::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

std::chrono::milliseconds Backoff(const DeliveryOptions& o, int attempts, std::mt19937_64& rng) {
  double d = static_cast<double>(o.base_backoff.count());
  for (int i = 1; i < attempts && d < static_cast<double>(o.max_backoff.count()); ++i) d *= 2;
  d = std::min(d, static_cast<double>(o.max_backoff.count()));
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(d * jitter(rng)));
}

namespace {

// Plain helpers outside the coroutines (GCC 12 and braced initializers in coroutines).
json::object Claims(const std::string& issuer, const std::string& audience, int64_t now_ms,
                    int64_t lifetime_s, const std::string& jti, const std::string& task_id,
                    const std::string& event_id) {
  json::object c;
  c["iss"] = issuer;
  c["aud"] = audience;
  c["iat"] = now_ms / 1000;
  c["exp"] = now_ms / 1000 + lifetime_s;
  c["jti"] = jti;
  c["taskId"] = task_id;
  c["eventId"] = event_id;
  return c;
}

Headers BuildHeaders(const storage::OutboxRow& row, const protocol::PushNotificationConfig& cfg,
                     const std::string& jwt) {
  Headers h;
  h.reserve(8);
  h.emplace_back("Content-Type", row.content_type);
  h.emplace_back("X-A2A-Event-Id", row.id);
  if (!cfg.token.empty()) h.emplace_back("X-A2A-Notification-Token", cfg.token);
  if (cfg.authentication && !cfg.authentication->credentials.empty()) {
    h.emplace_back("Authorization",
                   cfg.authentication->scheme + " " + cfg.authentication->credentials);
    h.emplace_back("X-A2A-Push-JWT", jwt);
  } else {
    h.emplace_back("Authorization", "Bearer " + jwt);
  }
  return h;
}

// What the loop does with a due row.
enum class Action { kStart, kQueue, kDefer, kSkip };

// OpenWOP webhook delivery headers (DIGEST §6.2): HMAC-SHA256 over "<timestamp>.<body>".
Headers WebhookHeaders(const storage::OutboxRow& row, const storage::WebhookRecord& hook,
                       int64_t now_s) {
  std::string event_type;
  auto parsed = protocol::ParseJson(row.body);
  const json::value body = parsed ? std::move(parsed).value() : json::value();
  if (body.is_object())
    if (const json::value* ev = body.as_object().if_contains("event"); ev && ev->is_object())
      if (const json::value* t = ev->as_object().if_contains("type"); t && t->is_string())
        event_type = std::string(t->get_string());
  const std::string ts = std::to_string(now_s);
  // One initializer list (GCC 12 at -O3 warns falsely about emplace_back chains here).
  Headers h{{"Content-Type", row.content_type},
            {"User-Agent", "openwop-webhook-dispatcher/a2ad"},
            {"X-openwop-Webhook-Id", hook.id},
            {"X-openwop-Event-Type", event_type},
            {"X-openwop-Timestamp", ts},
            {"X-openwop-Signature", "sha256=" + HmacSha256Hex(hook.secret, ts + "." + row.body)},
            {"X-openwop-Signature-Algorithm", "v1"},
            {"X-A2A-Event-Id", row.id}};
  return h;
}

std::string Destination(const std::string& url) {
  net::EgressPolicy lenient;
  lenient.allow_http = true;
  auto parsed = net::ParseUrl(url, lenient);
  if (!parsed) return url;
  return parsed->host + ":" + std::to_string(parsed->port);
}

// One attempt's request (outside the coroutine: GCC 12 and braced initializers).
net::HttpRequest AttemptRequest(const DeliveryOptions& o, std::string url, std::string body,
                                Headers headers) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = std::move(url);
  req.headers.emplace_back("User-Agent", o.user_agent);  // a webhook's own replaces it
  for (auto& h : headers) req.headers.push_back(std::move(h));
  req.body = std::move(body);
  req.connect_timeout = o.connect_timeout;
  req.total_timeout = o.total_timeout;
  req.max_response_bytes = o.max_response_bytes;
  req.redirects = net::RedirectPolicy::Never();  // DIGEST §6.3 item 4: a 3xx is a failure
  return req;
}

// "" when the answer is a delivery (2xx), else why not.
std::string Judge(const core::Result<net::HttpResponse>& answer) {
  if (!answer) return WebhookUrlError(answer.error()).message;
  const int status = answer->status;
  if (status >= 200 && status < 300) return {};
  if (status >= 300 && status < 400)
    return "redirect (" + std::to_string(status) + ") not followed";
  return "HTTP " + std::to_string(status);
}

}  // namespace

DeliveryWorker::DeliveryWorker(asio::any_io_executor io, storage::PushStore& store,
                               const net::HttpClient& client, KeyStore& keys,
                               const core::Clock& clock, core::IdGenerator& ids,
                               DeliveryOptions options)
    : io_(std::move(io)),
      store_(store),
      client_(client),
      keys_(keys),
      clock_(clock),
      ids_(ids),
      options_(std::move(options)),
      timer_(asio::make_strand(io_)),
      rng_(std::random_device{}()) {}

DeliveryWorker::~DeliveryWorker() = default;

void DeliveryWorker::Start() {
  auto self = shared_from_this();
  asio::co_spawn(
      timer_.get_executor(), [self]() { return self->Loop(); }, asio::detached);
}

void DeliveryWorker::Stop() {
  stopped_ = true;
  WakeUp();
}

void DeliveryWorker::WakeUp() {
  woken_ = true;
  asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

asio::awaitable<void> DeliveryWorker::Loop() {
  while (!stopped_) {
    woken_ = false;
    const int64_t now = clock_.NowMs();
    size_t claimed = 0;
    {
      std::lock_guard lock(mu_);
      claimed = claimed_.size();
    }
    // Claimed rows (running or waiting) are still pending in the store: read past them.
    auto due = store_.DueOutbox(now, options_.batch + claimed);
    if (!due) {
      core::LogWarn("push delivery: cannot read the outbox: " + due.error().message);
    } else {
      for (auto& row : *due) {
        std::string dest = Destination(row.url);
        Action action = Action::kSkip;
        {
          std::lock_guard lock(mu_);
          if (claimed_.count(row.id)) continue;  // running or waiting in memory
          size_t& running = per_destination_[dest];
          if (running < options_.per_destination && active_ < options_.max_in_flight) {
            ++running;
            ++active_;
            action = Action::kStart;
          } else if (running >= options_.per_destination &&
                     waiting_[dest].size() < options_.max_waiting_per_destination) {
            action = Action::kQueue;
          } else {
            action = Action::kDefer;
          }
          if (action != Action::kDefer) claimed_.insert(row.id);
        }
        if (action == Action::kStart) {
          asio::co_spawn(io_, Deliver(std::move(row), std::move(dest)), asio::detached);
        } else if (action == Action::kQueue) {
          // Waits in memory for a slot of its destination (claimed: later polls skip it).
          std::lock_guard lock(mu_);
          waiting_[dest].push_back(std::move(row));
        } else if (action == Action::kDefer) {
          row.next_attempt_at_ms = now + options_.busy_defer.count();
          (void)store_.UpdateOutbox(row);
        }
      }
    }
    if (stopped_) break;
    if (!woken_) {
      // Until the next due row (a retry), at most one poll interval (a safety net: new rows
      // normally wake the loop through WakeUp).
      // A due time in the past belongs to a claimed row (running or waiting for a slot):
      // its end wakes the loop, so only a future due time shortens the wait.
      auto wait = options_.poll_interval;
      if (auto next = store_.NextDueAt(); next && next.value()) {
        const int64_t until = *next.value() - clock_.NowMs();
        if (until > 0) wait = std::min(std::chrono::milliseconds(until), wait);
      }
      timer_.expires_after(wait);
      (void)co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }
}

void DeliveryWorker::Finish(const std::string& row_id, const std::string& destination) {
  std::optional<storage::OutboxRow> next;
  {
    std::lock_guard lock(mu_);
    claimed_.erase(row_id);
    auto w = waiting_.find(destination);
    if (w != waiting_.end() && !w->second.empty() && !stopped_) {
      next = std::move(w->second.front());  // the slot passes to the next waiting row
      w->second.pop_front();
      if (w->second.empty()) waiting_.erase(w);
    } else {
      if (w != waiting_.end() && w->second.empty()) waiting_.erase(w);
      --active_;
      if (auto it = per_destination_.find(destination); it != per_destination_.end())
        if (--it->second == 0) per_destination_.erase(it);
    }
  }
  if (next) asio::co_spawn(io_, Deliver(std::move(*next), destination), asio::detached);
}

DeliveryWorker::Attempt DeliveryWorker::PrepareAttempt(const storage::OutboxRow& row) {
  Attempt a;
  const int64_t now = clock_.NowMs();
  if (row.kind == "webhook") {
    auto hook = store_.GetWebhook(row.target_id);
    if (!hook) {
      a.failure = "webhook lookup: " + hook.error().message;
    } else if (!hook.value()) {
      a.failure = "webhook " + row.target_id + " was deleted";
      a.permanent = true;
    } else {
      a.url = hook.value()->url;
      a.headers = WebhookHeaders(row, *hook.value(), now / 1000);
    }
    return a;
  }
  auto stored = store_.GetConfig(row.task_id, row.target_id);
  if (!stored) {
    a.failure = "push config lookup: " + stored.error().message;
    return a;
  }
  if (!stored.value()) {
    a.failure = "push config '" + row.target_id + "' was deleted";
    a.permanent = true;
    return a;
  }
  const protocol::PushNotificationConfig& cfg = stored.value()->config;
  auto jwt = keys_.Sign(Claims(options_.issuer, cfg.url, now, options_.token_lifetime_s,
                               ids_.Next(), row.task_id, row.id));
  if (!jwt) {
    a.failure = "signing: " + jwt.error().message;
    return a;
  }
  a.url = cfg.url;
  a.headers = BuildHeaders(row, cfg, *jwt);
  return a;
}

void DeliveryWorker::FlushOutcomes() {
  std::vector<Outcome> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(outcomes_);
    flush_scheduled_ = false;
  }
  if (batch.empty()) return;
  std::vector<storage::OutboxRow> rows;
  rows.reserve(batch.size());
  for (const auto& o : batch) rows.push_back(o.row);
  if (auto saved = store_.UpdateOutboxBatch(rows); !saved)
    core::LogWarn("push delivery: cannot record " + std::to_string(rows.size()) +
                  " outcome(s): " + saved.error().message + " (they will be attempted again)");
  bool retry = false;
  for (const auto& o : batch) {
    retry = retry || o.row.state == storage::OutboxState::kPending;
    Finish(o.row.id, o.destination);  // frees the slot (or hands it to a waiting row)
  }
  if (retry) WakeUp();  // the loop recomputes its wait: a retry may be due before it ends
}

core::MetricFamily& PushAttempts() {
  static auto& attempts = core::Metrics().Family(
      "a2ad_push_attempts_total", core::MetricsRegistry::Type::kCounter,
      "Push and webhook delivery attempts, by outcome: delivered, failed (retried later), dead "
      "(given up).",
      {"outcome"});
  return attempts;
}

asio::awaitable<void> DeliveryWorker::Deliver(storage::OutboxRow row, std::string destination) {
  // 1. Nothing is written before the attempt: the row stays claimed in memory (no second
  //    attempt starts) and, after a crash, it is still due and is tried again.
  // 2. Destination, credentials and signature (a2a: config + JWT; webhook: HMAC v1).
  Attempt attempt = PrepareAttempt(row);
  std::string failure = attempt.failure;
  const bool permanent = attempt.permanent;
  // The attempt is a span of the run's trace; the receiver gets its context.
  core::Span span(row.kind == "webhook" ? "webhook deliver" : "push deliver",
                  core::SpanKind::kProducer, row.traceparent);
  span.Set("a2a.task.id", row.task_id);
  span.Set("a2ad.push.id", row.id);
  span.Set("a2ad.push.attempt", static_cast<int64_t>(row.attempts + 1));
  attempt.headers.emplace_back("traceparent", span.Context());
  if (failure.empty()) {
    // 3. Vet again (fresh DNS), 4. POST to the vetted address only (the client's Fetch).
    const net::HttpClient& client =
        row.kind == "webhook" && webhook_client_ ? *webhook_client_ : client_;
    auto answer = co_await client.Fetch(
        AttemptRequest(options_, std::move(attempt.url), row.body, std::move(attempt.headers)));
    failure = Judge(answer);
  }
  if (!failure.empty()) span.Fail(failure);
  span.End();
  core::MetricFamily& attempts = PushAttempts();
  const int64_t now = clock_.NowMs();
  row.attempts += 1;
  if (failure.empty()) {
    row.state = storage::OutboxState::kDelivered;
    row.finished_at_ms = now;
    row.last_error.clear();
    ++delivered_;
    attempts.Add({"delivered"});
    core::Log(core::LogLevel::kInfo, "push delivered",
              {{"push", std::string_view(row.id)},
               {"task", std::string_view(row.task_id)},
               {"to", std::string_view(destination)},
               {"attempt", static_cast<int64_t>(row.attempts)}});
  } else if (permanent || row.attempts >= options_.max_attempts) {
    row.state = storage::OutboxState::kDead;
    row.finished_at_ms = now;
    row.last_error = failure;
    ++dead_;
    attempts.Add({"dead"});
    core::Log(core::LogLevel::kWarn, "push dead-lettered",
              {{"push", std::string_view(row.id)},
               {"task", std::string_view(row.task_id)},
               {"to", std::string_view(destination)},
               {"attempt", static_cast<int64_t>(row.attempts)},
               {"why", std::string_view(failure)}});
  } else {
    std::chrono::milliseconds delay;
    {
      std::lock_guard lock(mu_);
      delay = Backoff(options_, row.attempts, rng_);
    }
    row.next_attempt_at_ms = now + delay.count();
    row.last_error = failure;
    attempts.Add({"failed"});
    core::Log(core::LogLevel::kInfo, "push attempt failed",
              {{"push", std::string_view(row.id)},
               {"task", std::string_view(row.task_id)},
               {"to", std::string_view(destination)},
               {"attempt", static_cast<int64_t>(row.attempts)},
               {"why", std::string_view(failure)},
               {"retryInMs", static_cast<int64_t>(delay.count())}});
  }
  // 5. Record the outcome: batched with other attempts' outcomes into one transaction. The
  //    row stays claimed until it is written (a crash before that re-sends it: at least once).
  bool flush_now = false;
  {
    std::lock_guard lock(mu_);
    outcomes_.push_back({std::move(row), std::move(destination)});
    flush_now = !flush_scheduled_;
    flush_scheduled_ = true;
  }
  if (flush_now)
    asio::post(timer_.get_executor(), [self = shared_from_this()] { self->FlushOutcomes(); });
}

}  // namespace a2ad::push

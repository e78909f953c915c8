#include "a2ad/client/retry.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>

#include "a2ad/net/egress_error.hpp"

namespace a2ad::client {
namespace asio = boost::asio;
using net::EgressFailure;

bool RetryableStatus(int status) { return status == 429 || (status >= 500 && status <= 599); }

bool RetryableError(const core::Error& e) {
  if (!e.Detail("peerCode").empty()) return false;
  if (auto kind = net::EgressFailureOf(e))
    return *kind != EgressFailure::kRefused && *kind != EgressFailure::kRedirect &&
           *kind != EgressFailure::kTooLarge;
  return e.code == core::ErrorCode::kUnavailable;
}

namespace {

// Retry-After in seconds (the HTTP-date form is not honoured: the backoff applies).
std::optional<std::chrono::milliseconds> RetryAfter(const net::HttpResponse& r) {
  std::string_view v = r.Header("Retry-After");
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || seconds < 0)
    return std::nullopt;
  return std::chrono::milliseconds(seconds * 1000);
}

asio::awaitable<bool> TimerSleep(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
  co_return true;
}

}  // namespace

asio::awaitable<Attempted> FetchWithRetry(const net::HttpClient& http, net::HttpRequest request,
                                          RetryPolicy policy, Sleeper sleep) {
  if (!sleep) sleep = TimerSleep;
  const int attempts = std::max(1, policy.max_attempts);
  std::chrono::milliseconds wait = policy.backoff;
  for (int i = 1;; ++i) {
    auto r = co_await http.Fetch(request);
    bool again = r ? RetryableStatus(r.value().status) : RetryableError(r.error());
    if (!again || i >= attempts) co_return Attempted{std::move(r), i, false};
    std::chrono::milliseconds next = wait;
    if (r)
      if (auto after = RetryAfter(r.value())) next = *after;
    next = std::min(next, policy.max_wait);
    if (!co_await sleep(next)) co_return Attempted{std::move(r), i, true};
    wait = std::min(wait * 2, policy.max_wait);
  }
}

}  // namespace a2ad::client

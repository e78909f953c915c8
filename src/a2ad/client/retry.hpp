#pragma once
// Outbound requests with retries (issue 16): what every caller of another service does the
// same way (HTTP workflow nodes, A2A peer calls, the `a2a` CLI). An attempt is retried when
// it failed in a way that may pass: a transport failure (no connection, TLS, timeout, a
// broken exchange, a name that did not resolve), or an answer 429 or 5xx. A 429 or 503 with
// Retry-After (seconds) waits that long (capped); else the wait doubles from `backoff`. A
// refusal of the egress guard, a redirect the policy forbids and an oversized answer are
// never retried. The last answer or error is returned as it is.
//
// Thread safety: pure functions over a thread-safe HttpClient.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>

#include "a2ad/core/result.hpp"
#include "a2ad/net/http_client.hpp"

namespace a2ad::client {

struct RetryPolicy {
  int max_attempts = 3;                       // 1: no retry
  std::chrono::milliseconds backoff{500};     // before the second attempt; doubles
  std::chrono::milliseconds max_wait{30000};  // cap of one wait (Retry-After included)
};

/// Waits `d` before the next attempt; false gives up (a cancel). Default: a steady timer.
using Sleeper = std::function<boost::asio::awaitable<bool>(std::chrono::milliseconds d)>;

struct Attempted {
  core::Result<net::HttpResponse> result;
  int attempts = 0;
  bool gave_up = false;  // the sleeper said stop
};

/// True when `status` is worth another attempt (429, 5xx).
bool RetryableStatus(int status);

/// True when a failed call may pass if made again: a transport failure (no connection, TLS,
/// timeout, a broken exchange, a name that did not resolve), or an answer 429/5xx the caller
/// made an error of (kUnavailable). Not: a refusal of the egress guard, a forbidden redirect,
/// an oversized answer, or a JSON-RPC error (detail peerCode, a2a_client.hpp).
bool RetryableError(const core::Error& e);

/// Fetches `request` (vetted by the client's guard each time) up to policy.max_attempts.
boost::asio::awaitable<Attempted> FetchWithRetry(const net::HttpClient& http,
                                                 net::HttpRequest request, RetryPolicy policy,
                                                 Sleeper sleep = {});

}  // namespace a2ad::client

#include "a2ad/effects/effect_claims.hpp"

#include <openssl/rand.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <exception>
#include <vector>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/sha256.hpp"
#include "a2ad/tasks/signal.hpp"

namespace a2ad::effects {
namespace asio = boost::asio;
namespace json = boost::json;

struct EffectClaims::Claim {
  bool done = false;
  bool interrupted = false;  // done without a result: a waiter claims the key again
  json::object result;
  std::vector<std::shared_ptr<tasks::Signal>> waiters;
};

void EffectClaims::PurgeLocked(Clock::time_point now) {
  while (!kept_.empty() && (kept_.size() > max_kept_ || now - kept_.front().first >= keep_)) {
    auto it = claims_.find(kept_.front().second);
    if (it != claims_.end() && it->second->done) claims_.erase(it);
    kept_.pop_front();
  }
}

asio::awaitable<EffectClaims::Outcome> EffectClaims::Run(std::string key, Call call) {
  for (;;) {
    std::shared_ptr<Claim> claim;
    std::shared_ptr<tasks::Signal> wake;
    bool mine = false;
    {
      std::lock_guard lock(mu_);
      PurgeLocked(now_());
      auto it = claims_.find(key);
      if (it == claims_.end()) {
        claim = std::make_shared<Claim>();
        claims_.emplace(key, claim);
        mine = true;
      } else {
        claim = it->second;
        if (!claim->done) {
          wake = std::make_shared<tasks::Signal>();
          claim->waiters.push_back(wake);
        }
      }
    }
    if (mine) {
      json::object result;
      std::exception_ptr threw;
      try {
        result = co_await call();
      } catch (...) {
        threw = std::current_exception();
      }
      std::vector<std::shared_ptr<tasks::Signal>> waiters;
      {
        std::lock_guard lock(mu_);
        claim->done = true;
        claim->interrupted = threw != nullptr || result.contains("interrupted");
        if (claim->interrupted) {
          claims_.erase(key);  // nothing was learnt: the next one calls
        } else {
          claim->result = result;
          // Whoever appears later within keep_ shares it; the deque names the key once per
          // finished claim, so a purge never drops a newer claim of the same key.
          kept_.emplace_back(now_(), key);
        }
        waiters.swap(claim->waiters);
      }
      for (auto& w : waiters) w->Fire();
      if (threw) std::rethrow_exception(threw);
      co_return Outcome{std::move(result), false};
    }
    if (wake) co_await wake->Wait();
    {
      std::lock_guard lock(mu_);
      if (!claim->interrupted) co_return Outcome{claim->result, true};
    }
    // The claimant was interrupted: try to claim it ourselves.
  }
}

size_t EffectClaims::in_flight() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [key, c] : claims_) n += c->done ? 0 : 1;
  return n;
}

size_t EffectClaims::kept() const {
  std::lock_guard lock(mu_);
  return kept_.size();
}

std::string IdempotencyKey(std::string_view tenant, std::string_view run, std::string_view node,
                           int64_t ordinal, std::string_view provider) {
  std::string in("openwop:activity:v2");
  for (std::string_view part : {tenant, run, node}) {
    in.push_back('\0');
    in += part;
  }
  in.push_back('\0');
  in += std::to_string(ordinal);
  in.push_back('\0');
  in += provider;
  return core::Base64UrlEncode(core::DigestBytes(core::Sha256Of(in)));
}

namespace {

struct ProbeState {
  std::mutex mu;
  std::vector<std::string> minted;
  int remaining = 0;
  int delivered = 0;
  int shared = 0;
  tasks::Signal all_done;
};

// The probe's effect: counts what escapes the host, and takes `d` doing it.
asio::awaitable<json::object> ProbeEffect(std::shared_ptr<ProbeState> st,
                                          std::chrono::milliseconds d) {
  {
    std::lock_guard lock(st->mu);
    ++st->delivered;
  }
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
  co_return json::object{{"delivered", true}};
}

}  // namespace

asio::awaitable<json::object> ProbeConcurrentClaim(EffectClaims& claims, asio::any_io_executor pool,
                                                   int executors,
                                                   std::chrono::milliseconds effect_time) {
  auto st = std::make_shared<ProbeState>();
  st->minted.resize(static_cast<size_t>(executors));
  st->remaining = executors;
  unsigned char raw[12];
  RAND_bytes(raw, sizeof raw);
  const std::string run = "claim-probe-" + core::Base64UrlEncode(std::string_view(
                                               reinterpret_cast<const char*>(raw), sizeof raw));
  // Each executor mints the run's identity for the node, then claims it on its own strand:
  // they run in parallel on the server's threads.
  for (size_t i = 0; i < static_cast<size_t>(executors); ++i) {
    st->minted[i] = IdempotencyKey("default", run, "effect", 0, "core.http");
    asio::co_spawn(
        asio::make_strand(pool),
        claims.Run(st->minted[i], [st, effect_time] { return ProbeEffect(st, effect_time); }),
        [st](const std::exception_ptr&, const EffectClaims::Outcome& out) {
          bool last = false;
          {
            std::lock_guard lock(st->mu);
            if (out.shared) ++st->shared;
            last = --st->remaining == 0;
          }
          if (last) st->all_done.Fire();
        });
  }
  co_await st->all_done.Wait();
  std::lock_guard lock(st->mu);
  json::array minted;
  for (const auto& m : st->minted) minted.emplace_back(m);
  co_return json::object{{"logicalInvocationId", st->minted.front()},
                         {"mintedIds", std::move(minted)},
                         {"attempted", executors},
                         {"delivered", st->delivered},
                         {"shared", st->shared}};
}

}  // namespace a2ad::effects

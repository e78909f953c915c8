#include "a2ad/transport/auth/oidc_verifier.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/json.hpp>
#include <cctype>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/jwt.hpp"
#include "a2ad/tasks/signal.hpp"
#include "a2ad/transport/auth/auth.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::Jwk;
using protocol::JwkSet;
using protocol::Jwt;

namespace {

constexpr size_t kMaxIdLength = 256;
constexpr size_t kMaxTenantLength = 128;

Error Invalid(std::string why) {
  return Error(ErrorCode::kUnauthenticated, "invalid token: " + std::move(why));
}

Error KeysUnavailable() {
  return Error(ErrorCode::kUnavailable,
               "the OIDC issuer's signing keys are unavailable (its JWKS cannot be fetched "
               "now); try again later");
}

// A key set's life from its response's Cache-Control (see the header).
int64_t MaxAgeOf(std::string_view cache_control, const OidcOptions& o) {
  std::string cc(cache_control);
  for (char& c : cc) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (cc.find("no-store") != std::string::npos || cc.find("no-cache") != std::string::npos)
    return o.min_max_age_ms;
  const size_t at = cc.find("max-age=");
  if (at == std::string::npos) return o.default_max_age_ms;
  int64_t seconds = 0;
  size_t digits = 0;
  for (size_t i = at + 8; i < cc.size() && std::isdigit(static_cast<unsigned char>(cc[i])); ++i)
    if (++digits <= 10) seconds = seconds * 10 + (cc[i] - '0');
  if (digits == 0) return o.default_max_age_ms;
  return std::clamp(seconds * 1000, o.min_max_age_ms, o.max_max_age_ms);
}

// The scopes a claim value grants: a space-separated string or an array of strings.
Result<std::vector<std::string>> ScopesOf(const json::value& v, std::string_view claim) {
  std::vector<std::string> out;
  if (v.is_string()) {
    std::string cur;
    for (char c : std::string(v.get_string()) + " ") {
      if (c == ' ') {
        if (!cur.empty()) out.push_back(std::move(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    return out;
  }
  if (v.is_array()) {
    for (const auto& s : v.get_array()) {
      if (!s.is_string()) break;
      out.emplace_back(s.get_string());
    }
    if (out.size() == v.get_array().size()) return out;
  }
  return Invalid("the '" + std::string(claim) +
                 "' claim is neither a space-separated string nor an array of strings");
}

}  // namespace

std::string OidcDiscoveryUrl(std::string_view issuer) {
  while (!issuer.empty() && issuer.back() == '/') issuer.remove_suffix(1);
  return std::string(issuer) + "/.well-known/openid-configuration";
}

struct OidcVerifier::State : std::enable_shared_from_this<State> {
  State(OidcOptions o, const net::HttpClient& c, const core::Clock& k, asio::any_io_executor e)
      : options(std::move(o)), client(c), clock(k), executor(std::move(e)) {
    jwks_url = options.jwks_url;
  }

  // What a request does next.
  struct Step {
    enum Kind { kVerify, kRefuse, kWait } kind = kRefuse;
    std::shared_ptr<const JwkSet> keys;  // kVerify: holds `key`
    const Jwk* key = nullptr;
    Error error;
    bool launch = false;  // start the fetch this step asked for (after the lock is released)
  };

  // The one decision under the lock (see the header): verify with a key held, wait for a fetch
  // (`wake` is then called once it is done), or refuse. `waited`: how often this request
  // has waited already.
  Step Next(const Jwt& jwt, int waited, std::function<void()> wake) {
    Step step;
    std::lock_guard lock(mu);
    const int64_t now = clock.NowMs();
    if (keys) {
      auto found = protocol::FindJwk(*keys, jwt);
      if (!found) {
        step.error = std::move(found).error();
        return step;
      }
      if (*found) {
        if (!fetching && now - fetched_at_ms >= max_age_ms && IntervalPassed(last_attempt_ms, now))
          step.launch = BeginFetch(now);
        step.kind = Step::kVerify;
        step.keys = keys;
        step.key = *found;
        return step;
      }
    }
    if (waited < 2 && (fetching || IntervalPassed(last_on_demand_ms, now))) {
      if (!fetching) {
        last_on_demand_ms = now;
        step.launch = BeginFetch(now);
      }
      waiters.push_back(std::move(wake));
      step.kind = Step::kWait;
      return step;
    }
    if (!keys || failing)
      step.error = KeysUnavailable();
    else
      step.error = Invalid(jwt.kid.empty() ? "none of the issuer's signing keys fits its alg"
                                           : "its kid names none of the issuer's signing keys");
    return step;
  }

  bool IntervalPassed(const std::optional<int64_t>& since, int64_t now) const {
    return !since || now - *since >= options.refresh_interval_ms;
  }

  bool BeginFetch(int64_t now) {
    fetching = true;
    last_attempt_ms = now;
    return true;
  }

  // Runs the fetch BeginFetch asked for on the verifier's executor.
  void Launch() {
    auto self = shared_from_this();
    asio::co_spawn(executor, self->FetchKeys(),
                   [self](const std::exception_ptr& ep, Result<Fetched> got) {
                     if (ep) got = Error(ErrorCode::kInternal, "fetching the JWKS threw");
                     self->Finish(std::move(got));
                   });
  }

  struct Fetched {
    JwkSet keys;
    int64_t max_age_ms = 0;
    std::string url;
  };

  asio::awaitable<Result<net::HttpResponse>> Get(std::string url) {
    net::HttpRequest req;
    req.url = std::move(url);
    req.headers.emplace_back("Accept", "application/json");
    req.connect_timeout = options.connect_timeout;
    req.total_timeout = options.fetch_timeout;
    req.max_response_bytes = options.max_response_bytes;
    const std::string what = "GET " + req.url;
    auto got = co_await client.Fetch(std::move(req));
    if (!got) co_return Error(ErrorCode::kUnavailable, what + ": " + got.error().message);
    if (got->status != 200)
      co_return Error(ErrorCode::kUnavailable, what + ": HTTP " + std::to_string(got->status));
    co_return got;
  }

  asio::awaitable<Result<Fetched>> FetchKeys() {
    std::string url;
    {
      std::lock_guard lock(mu);
      url = jwks_url;
    }
    if (url.empty()) {
      const std::string where = OidcDiscoveryUrl(options.issuer);
      auto doc = co_await Get(where);
      if (!doc) co_return std::move(doc).error();
      auto meta = protocol::ParseJsonObject(doc->body, "discovery document");
      if (!meta) co_return Error(ErrorCode::kUnavailable, where + ": " + meta.error().message);
      const json::value* issuer = meta->if_contains("issuer");
      if (!issuer || !issuer->is_string() || issuer->get_string() != options.issuer)
        co_return Error(ErrorCode::kUnavailable, where + ": its issuer is not '" + options.issuer +
                                                     "' (OpenID Connect Discovery §4.3)");
      const json::value* uri = meta->if_contains("jwks_uri");
      if (!uri || !uri->is_string() || uri->get_string().empty())
        co_return Error(ErrorCode::kUnavailable, where + ": no jwks_uri");
      url = std::string(uri->get_string());
      std::lock_guard lock(mu);
      jwks_url = url;
    }
    auto got = co_await Get(url);
    if (!got) co_return std::move(got).error();
    auto set = protocol::ParseJwks(got->body);
    if (!set) co_return Error(ErrorCode::kUnavailable, url + ": " + set.error().message);
    if (set->keys.empty()) {
      std::string why = url + ": the JWKS holds no usable signing key";
      for (const auto& s : set->skipped) why += "; " + s;
      co_return Error(ErrorCode::kUnavailable, why);
    }
    Fetched out;
    out.max_age_ms = MaxAgeOf(got->Header("Cache-Control"), options);
    out.keys = std::move(set).value();
    out.url = std::move(url);
    co_return out;
  }

  void Finish(Result<Fetched> got) {
    std::vector<std::function<void()>> wake;
    bool was_failing;
    bool first;
    size_t count = 0;
    std::vector<std::string> skipped;
    {
      std::lock_guard lock(mu);
      fetching = false;
      was_failing = failing;
      first = !keys;
      failing = !got.ok();
      if (got) {
        count = got->keys.keys.size();
        skipped = got->keys.skipped;
        keys = std::make_shared<const JwkSet>(std::move(got->keys));
        fetched_at_ms = clock.NowMs();
        max_age_ms = got->max_age_ms;
      }
      wake.swap(waiters);
    }
    if (got) {
      const std::string line = "oidc: " + std::to_string(count) + " signing key(s) of " +
                               options.issuer + " from " + got->url + ", kept " +
                               std::to_string(got->max_age_ms / 1000) + " s";
      if (first || was_failing)
        core::LogInfo(line);
      else
        core::LogDebug(line);
      for (const auto& s : skipped) core::LogDebug("oidc: JWKS " + s + ": skipped");
    } else {
      const std::string line = "oidc: cannot fetch the signing keys of " + options.issuer + ": " +
                               got.error().message +
                               (first ? "; tokens are refused (503) until a fetch succeeds"
                                      : "; the keys fetched before stay in use") +
                               "; requests start a fetch at most every " +
                               std::to_string(options.refresh_interval_ms / 1000) + " s";
      if (was_failing)
        core::LogDebug(line);
      else
        core::LogWarn(line);
    }
    for (auto& w : wake) w();
  }

  // Verifies `jwt` with `key`, then reads the principal from its claims.
  Result<protocol::Principal> PrincipalOf(const Jwt& jwt, const Jwk& key) const {
    const protocol::JwtExpectations expect{options.issuer, options.audience, options.leeway_s};
    if (auto ok = protocol::VerifyJwt(jwt, key, expect, clock.NowMs()); !ok)
      return std::move(ok).error();
    const json::object& claims = jwt.claims;
    protocol::Principal p;
    const json::value* id = claims.if_contains(options.principal_claim);
    if (!id || !id->is_string() || id->get_string().empty() ||
        id->get_string().size() > kMaxIdLength)
      return Invalid("the '" + options.principal_claim +
                     "' claim (who calls) is missing or not a string of 1 to 256 characters");
    p.id = "oidc:" + std::string(id->get_string());
    const json::value* tenant = claims.if_contains(options.tenant_claim);
    if (!tenant) {
      if (options.default_tenant.empty())
        return Invalid("it has no '" + options.tenant_claim +
                       "' claim, and every call's tenant comes from its credential");
      p.tenant = options.default_tenant;
    } else if (!tenant->is_string() || tenant->get_string().empty() ||
               tenant->get_string().size() > kMaxTenantLength) {
      return Invalid("the '" + options.tenant_claim +
                     "' claim is not a string of 1 to 128 characters");
    } else {
      p.tenant = std::string(tenant->get_string());
    }
    const json::value* scope = claims.if_contains(options.scope_claim);
    std::string scope_claim = options.scope_claim;
    if (!scope && scope_claim == "scope") {
      scope = claims.if_contains("scp");
      scope_claim = "scp";
    }
    p.scopes.clear();
    if (scope) {
      auto granted = ScopesOf(*scope, scope_claim);
      if (!granted) return std::move(granted).error();
      for (auto& s : *granted)
        if (IsKnownScope(s) && std::find(p.scopes.begin(), p.scopes.end(), s) == p.scopes.end())
          p.scopes.push_back(std::move(s));
    }
    p.all_scopes = std::find(p.scopes.begin(), p.scopes.end(), kScopeAdmin) != p.scopes.end();
    p.authenticated = true;
    return p;
  }

  const OidcOptions options;
  const net::HttpClient& client;
  const core::Clock& clock;
  asio::any_io_executor executor;

  std::mutex mu;                       // guards everything below
  std::shared_ptr<const JwkSet> keys;  // null until a fetch succeeded
  int64_t fetched_at_ms = 0;
  int64_t max_age_ms = 0;
  std::string jwks_url;  // configured, or discovered once
  bool fetching = false;
  bool failing = false;                      // the last fetch failed
  std::optional<int64_t> last_attempt_ms;    // the last fetch of any kind began
  std::optional<int64_t> last_on_demand_ms;  // the last fetch a request began
  std::vector<std::function<void()>> waiters;
};

Result<std::unique_ptr<OidcVerifier>> OidcVerifier::Create(OidcOptions options,
                                                           const net::HttpClient& client,
                                                           const core::Clock& clock,
                                                           asio::any_io_executor executor) {
  auto bad = [](std::string why) { return Error(ErrorCode::kInvalidParams, std::move(why)); };
  if (options.issuer.empty()) return bad("the OIDC issuer is required");
  if (options.audience.empty()) return bad("the OIDC audience is required with an issuer");
  if (options.tenant_claim.empty() || options.scope_claim.empty() ||
      options.principal_claim.empty())
    return bad("an OIDC claim name is empty");
  if (options.default_tenant.size() > kMaxTenantLength)
    return bad("the default tenant is longer than 128 characters");
  if (options.leeway_s < 0 || options.refresh_interval_ms < 0 || options.min_max_age_ms < 0 ||
      options.max_max_age_ms < options.min_max_age_ms)
    return bad("a negative OIDC leeway or interval");
  auto state = std::make_shared<State>(std::move(options), client, clock, std::move(executor));
  return std::unique_ptr<OidcVerifier>(new OidcVerifier(std::move(state)));
}

OidcVerifier::~OidcVerifier() = default;

const OidcOptions& OidcVerifier::options() const { return state_->options; }

void OidcVerifier::Start() {
  bool launch = false;
  {
    std::lock_guard lock(state_->mu);
    if (!state_->fetching && !state_->keys) launch = state_->BeginFetch(state_->clock.NowMs());
  }
  if (launch) state_->Launch();
}

asio::awaitable<Result<protocol::Principal>> OidcVerifier::Authenticate(std::string token) {
  std::shared_ptr<State> s = state_;
  auto jwt = protocol::DecodeJwt(token);
  if (!jwt) co_return std::move(jwt).error();
  for (int waited = 0;; ++waited) {
    auto signal = std::make_shared<tasks::Signal>();
    State::Step step = s->Next(*jwt, waited, [signal] { signal->Fire(); });
    if (step.launch) s->Launch();
    if (step.kind == State::Step::kRefuse) co_return std::move(step.error);
    if (step.kind == State::Step::kVerify) co_return s->PrincipalOf(*jwt, *step.key);
    co_await signal->Wait();
  }
}

Result<protocol::Principal> OidcVerifier::AuthenticateBlocking(const std::string& token) {
  auto jwt = protocol::DecodeJwt(token);
  if (!jwt) return std::move(jwt).error();
  const auto limit = 2 * state_->options.fetch_timeout + std::chrono::seconds(1);
  for (int waited = 0;; ++waited) {
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> fetched = done->get_future();
    State::Step step = state_->Next(*jwt, waited, [done] { done->set_value(); });
    if (step.launch) state_->Launch();
    if (step.kind == State::Step::kRefuse) return std::move(step.error);
    if (step.kind == State::Step::kVerify) return state_->PrincipalOf(*jwt, *step.key);
    if (fetched.wait_for(limit) != std::future_status::ready) return KeysUnavailable();
  }
}

}  // namespace a2ad::transport

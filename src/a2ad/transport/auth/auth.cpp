#include "a2ad/transport/auth/auth.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "a2ad/core/api_key.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/protocol/jwt.hpp"
#include "a2ad/transport/auth/client_cert_auth.hpp"
#include "a2ad/transport/auth/oidc_verifier.hpp"

namespace a2ad::transport {
using core::Error;
using core::ErrorCode;

namespace {

Error Unauthenticated(std::string message) {
  return Error(ErrorCode::kUnauthenticated, std::move(message));
}

bool IEqualsPrefix(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool IsKnownScope(std::string_view scope) {
  return std::find(std::begin(kKnownScopes), std::end(kKnownScopes), scope) !=
         std::end(kKnownScopes);
}

std::string_view PresentedCredential(const HttpRequest& request) {
  const std::string_view authorization = Trim(request.Header("Authorization"));
  if (IEqualsPrefix(authorization, "Bearer ")) return Trim(authorization.substr(7));
  return Trim(request.Header("X-API-Key"));
}

core::Result<bool> Authenticator::CheckEnabled() {
  if (certs_ || oidc_) return true;
  if (enabled_.load(std::memory_order_acquire)) return true;
  auto any = keys_.Any();
  if (!any) {
    core::LogError("api keys: " + any.error().message);
    return core::Error(core::ErrorCode::kUnavailable,
                       "the API keys cannot be read right now; retry later");
  }
  if (*any && !enabled_.exchange(true))
    core::LogInfo("api keys exist: authentication is on for every request");
  return *any;
}

bool Authenticator::Enabled() {
  // The store cannot be read: fail closed rather than serve unauthenticated.
  auto enabled = CheckEnabled();
  return !enabled || *enabled;
}

std::optional<core::Result<protocol::Principal>> Authenticator::Decide(const HttpRequest& request,
                                                                       std::string& jwt) {
  // Keys that cannot be read refuse the request (503): neither served unauthenticated nor
  // told its credential is wrong.
  auto enabled = CheckEnabled();
  if (!enabled) return std::move(enabled).error();
  if (!*enabled) return protocol::Principal{};
  const std::string_view credential = PresentedCredential(request);
  if (credential.empty() && certs_ && !request.client_cert_subject.empty())
    return certs_->PrincipalOf(request.client_cert_subject);
  if (credential.empty())
    return Unauthenticated(oidc_ ? "authentication required: send Authorization: Bearer <token "
                                   "of the OIDC issuer or api key>, or X-API-Key: <api key>"
                                 : "authentication required: send Authorization: Bearer <api "
                                   "key> or X-API-Key: <api key>");
  if (credential.starts_with(core::kApiKeyPrefix)) return ApiKeyPrincipal(credential);
  if (credential.starts_with(core::kSelfCredentialPrefix)) {
    auto tenant = self_ ? self_->TenantOf(credential) : std::nullopt;
    if (!tenant) return Unauthenticated("invalid credential");
    protocol::Principal p;
    p.id = "a2ad-self";
    p.tenant = std::move(*tenant);
    p.scopes = {"tasks:read", "tasks:write"};
    p.all_scopes = false;
    p.authenticated = true;
    return p;
  }
  if (!protocol::LooksLikeJwt(credential))
    return Unauthenticated(oidc_ ? "invalid credential: neither an a2ad API key nor a JWT"
                                 : "invalid credential: not an a2ad API key");
  if (!oidc_)
    return Unauthenticated(
        "invalid credential: a JWT, and this server takes no JWTs (it has no "
        "OIDC issuer); use an a2ad API key");
  if (!IEqualsPrefix(Trim(request.Header("Authorization")), "Bearer "))
    return Unauthenticated(
        "invalid credential: a JWT goes in Authorization: Bearer, not X-API-Key");
  jwt = std::string(credential);
  return std::nullopt;
}

boost::asio::awaitable<core::Result<protocol::Principal>> Authenticator::Authenticate(
    const HttpRequest& request) {
  std::string jwt;
  if (reads_) {
    struct Decision {
      std::optional<core::Result<protocol::Principal>> decided;
      std::string jwt;
    };
    auto d = co_await reads_->Run([&]() -> core::Result<Decision> {
      Decision out;
      out.decided = Decide(request, out.jwt);
      return out;
    });
    if (!d) co_return std::move(d).error();
    if (d->decided) co_return std::move(*d->decided);
    co_return co_await oidc_->Authenticate(std::move(d->jwt));
  }
  if (auto decided = Decide(request, jwt)) co_return std::move(*decided);
  co_return co_await oidc_->Authenticate(std::move(jwt));
}

core::Result<protocol::Principal> Authenticator::AuthenticateBlocking(const HttpRequest& request) {
  std::string jwt;
  if (auto decided = Decide(request, jwt)) return std::move(*decided);
  return oidc_->AuthenticateBlocking(jwt);
}

core::Result<protocol::Principal> Authenticator::ApiKeyPrincipal(std::string_view credential) {
  const auto parts = core::ParseApiKey(credential);
  if (!parts) return Unauthenticated("invalid credential: not an a2ad API key");
  auto found = keys_.Find(parts->key_id);
  if (!found) return std::move(found).error();
  // Hash even when the id is unknown, so an unknown id costs what a wrong secret does.
  const std::string presented = core::HashApiKeySecret(parts->secret);
  const std::string expected = found->has_value() ? (*found)->secret_sha256 : std::string(64, '0');
  const bool match = core::ConstantTimeEquals(presented, expected);
  if (!found->has_value() || !match) return Unauthenticated("invalid credential");
  const storage::ApiKeyRecord& key = **found;
  if (key.revoked_at_ms != 0) return Unauthenticated("invalid credential: the key is revoked");
  if (key.expires_at_ms != 0 && clock_.NowMs() >= key.expires_at_ms)
    return Unauthenticated("invalid credential: the key has expired");
  protocol::Principal p;
  p.id = key.key_id;
  p.tenant = key.tenant;
  p.scopes = key.scopes;
  p.all_scopes = std::find(key.scopes.begin(), key.scopes.end(), kScopeAdmin) != key.scopes.end();
  p.authenticated = true;
  return p;
}

std::optional<Error> Authenticator::Throttle(const protocol::Principal& who) {
  if (!limiter_) return std::nullopt;
  const int64_t wait_ms =
      limiter_->Take(who.authenticated ? std::string_view(who.id)
                                                   : protocol::kAnonymousPrincipal, clock_.NowMs());
  if (wait_ms == 0) return std::nullopt;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", limiter_->per_second());
  return Error(ErrorCode::kRateLimited,
               "rate limit exceeded: at most " + std::string(rate) +
                   " requests per second (bursts of " +
                   std::to_string(static_cast<int64_t>(limiter_->burst())) + "); retry in " +
                   std::to_string(wait_ms) + " ms",
               {{"retryAfterMs", std::to_string(wait_ms)}, {"scope", "key"}});
}

boost::asio::awaitable<std::optional<HttpResponse>> Admit(
    Authenticator& auth, HttpRequest& request, std::function<HttpResponse(const Error&)> shape) {
  auto who = co_await auth.Authenticate(request);
  if (who) {
    if (auto limited = auth.Throttle(*who)) {
      HttpResponse r = shape(*limited);
      for (const auto& [key, value] : limited->details)
        if (key == "retryAfterMs")
          r.headers.emplace_back("Retry-After", std::to_string((std::stoll(value) + 999) / 1000));
      co_return r;
    }
    request.principal = std::move(who).value();
    co_return std::nullopt;
  }
  HttpResponse r = shape(who.error());
  if (who.error().code == ErrorCode::kUnauthenticated) {
    const bool presented = !PresentedCredential(request).empty();
    r.headers.emplace_back("WWW-Authenticate", std::string(kWwwAuthenticate) +
                                                   (presented ? ", error=\"invalid_token\"" : ""));
  }
  co_return r;
}

protocol::CallContext CallerContext(const HttpRequest& request, protocol::Binding binding,
                                    protocol::WireVersion version) {
  auto ctx = protocol::CallContext::Anonymous(binding, version);
  if (request.principal) ctx.principal = *request.principal;
  // The router put the request span's context here (router.cpp); a valid one only.
  ctx.traceparent = std::string(request.Header("traceparent"));
  return ctx;
}

std::optional<Error> RequireScope(const protocol::CallContext& ctx, std::string_view scope) {
  if (scope.empty() || ctx.HasScope(scope)) return std::nullopt;
  return Error(ErrorCode::kPermissionDenied,
               "permission denied: this operation needs the scope '" + std::string(scope) + "'",
               {{"requiredScope", std::string(scope)}});
}

HttpResponse WithScopeChallenge(HttpResponse r, const Error& denied) {
  std::string challenge = std::string(kWwwAuthenticate) + ", error=\"insufficient_scope\"";
  for (const auto& [key, value] : denied.details)  // scope names hold no '"' or '\\'
    if (key == "requiredScope") challenge += ", scope=\"" + value + "\"";
  r.headers.emplace_back("WWW-Authenticate", std::move(challenge));
  return r;
}

}  // namespace a2ad::transport

#pragma once
// Who may call (issue 14): API-key authentication of every surface, and the scope check of
// each operation. OpenWOP RFC 0152 §E: the tenant comes from the credential, never from the
// request; DIGEST §6.4: keys hashed at rest, compared in constant time, never logged.
//
// The Router authenticates every request but those exempt (the agent cards, the JWKS,
// discovery, /healthz) before it dispatches: a failure is answered 401 with
// `WWW-Authenticate: Bearer` in the shape of the surface the path belongs to, a success puts
// the Principal into HttpRequest::principal, from which each binding builds its CallContext
// (CallerContext below). The gRPC binding authenticates its metadata the same way. Scopes are
// checked by the binding that knows the operation (Operation::scope; the OpenWOP routes'
// table in openwop_api.cpp); a missing scope is 403 (kPermissionDenied).
//
// A credential is `Authorization: Bearer <key or JWT>` or `X-API-Key: <key>` (gRPC metadata
// `authorization`, `x-api-key`). One that starts `a2ad_k_` is an API key, checked against the
// key store; one shaped like a JWT (three base64url parts) in `Authorization: Bearer` goes to
// the OIDC verifier when the server has an issuer (oidc_verifier.hpp), and is refused
// otherwise. Authentication is on when the server has an OIDC issuer, and as soon as the
// store holds any key (checked at every request until it does, then for good): without
// either the server is in development mode and every request is the anonymous caller with
// every scope. A credential with the scope `admin` has every scope.
//
// Mutual TLS (client_cert_auth.hpp): with a certificate map set, a request that presents no
// credential but came with a verified client certificate is that certificate's principal; a
// request with both is the credential's (the explicit credential wins, the certificate is not
// consulted). A certificate map turns authentication on from the start.
//
// Thread safety: Authenticate may be called from any thread at once (the store locks; the
// verifier is thread-safe).
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "a2ad/core/api_key.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/rate_limiter.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

class ClientCertMap;

/// Scopes (a2a_operations.hpp names the tasks and push ones).
inline constexpr const char* kScopeRunsRead = "runs:read";
inline constexpr const char* kScopeRunsWrite = "runs:write";
inline constexpr const char* kScopeInterruptsResolve = "interrupts:resolve";
inline constexpr const char* kScopeAdmin = "admin";
/// Every scope a2ad checks (the tasks and push ones named in a2a_operations.hpp).
inline constexpr std::string_view kKnownScopes[] = {
    "tasks:read", "tasks:write",        "push:manage", "runs:read",
    "runs:write", "interrupts:resolve", "admin"};
/// Whether `scope` is one of kKnownScopes.
bool IsKnownScope(std::string_view scope);

/// The value of the WWW-Authenticate header of a 401 (RFC 6750 §3).
inline constexpr const char* kWwwAuthenticate = "Bearer realm=\"a2ad\"";

class OidcVerifier;

class Authenticator {
 public:
  /// `keys`, `clock` and `oidc` (null: no OIDC issuer, JWTs are refused) must outlive the
  /// authenticator.
  Authenticator(storage::ApiKeyStore& keys, const core::Clock& clock, OidcVerifier* oidc = nullptr)
      : keys_(keys), clock_(clock), oidc_(oidc) {}

  /// The caller of a request with these headers: an API key's principal (id: the key id,
  /// tenant and scopes: the key's), a JWT's (oidc_verifier.hpp), or, in development mode, the
  /// anonymous caller. kUnauthenticated when authentication is on and the credential is
  /// missing, malformed, unknown, wrong, revoked or expired; kUnavailable when a JWT needs
  /// the issuer's keys and they cannot be fetched; kInternal when the key store cannot be
  /// read. Messages never contain the credential. `request` must stay alive until it
  /// completes; only a JWT may make it wait (for the issuer's keys).
  boost::asio::awaitable<core::Result<protocol::Principal>> Authenticate(
      const HttpRequest& request);
  /// Authenticate on a thread that may block (the gRPC binding's), never one of the I/O
  /// threads (OidcVerifier::AuthenticateBlocking).
  core::Result<protocol::Principal> AuthenticateBlocking(const HttpRequest& request);
  /// Mutual TLS: a request with no credential but a verified client certificate is the
  /// certificate's principal (client_cert_auth.hpp).
  /// Whether authentication is on (an OIDC issuer, a certificate map, or some key exists).
  /// Once true, stays true.
  bool Enabled();
  /// Enabled(), or kUnavailable when the key store cannot be read.
  core::Result<bool> CheckEnabled();
  /// Mutual TLS: maps verified client certificates (must outlive the authenticator; null:
  /// none). Set before serving.
  void SetClientCertificates(const ClientCertMap* certs) { certs_ = certs; }
  /// The host calling itself (core::SelfCredential; must outlive the authenticator; null:
  /// refused like any unknown credential): a credential it made is the principal
  /// "a2ad-self" of the tenant it names, with the scopes tasks:read and tasks:write. Set
  /// before serving.
  void SetSelfCredential(const core::SelfCredential* self) { self_ = self; }
  /// The key store may block (a network database): Authenticate looks keys up on `reads`
  /// (outliving the authenticator), never on the I/O thread that awaits it. Null (default):
  /// inline, for a store that answers at once (SQLite). Set before serving.
  void SetBlockingReads(tasks::ReadExecutor* reads) { reads_ = reads; }

  /// Rate limits per principal (core/rate_limiter.hpp; `--rate-limit`): off until set. The
  /// bucket of an authenticated caller is its principal's (a key's id); every caller of a
  /// server in development mode shares the one of the anonymous principal. Call before serving.
  void SetRateLimiter(std::unique_ptr<core::RateLimiter> limiter) { limiter_ = std::move(limiter); }
  /// kRateLimited when `who` is past its rate (details retryAfterMs, scope "key"; the
  /// message says when to retry); nullopt otherwise, and always without a limiter.
  std::optional<core::Error> Throttle(const protocol::Principal& who);

 private:
  // The answer for `request` when it can be given without the OIDC verifier; else nullopt,
  // with the JWT to verify in `jwt`.
  std::optional<core::Result<protocol::Principal>> Decide(const HttpRequest& request,
                                                          std::string& jwt);
  core::Result<protocol::Principal> ApiKeyPrincipal(std::string_view credential);

  storage::ApiKeyStore& keys_;
  const core::Clock& clock_;
  OidcVerifier* oidc_;
  std::atomic<bool> enabled_{false};
  std::unique_ptr<core::RateLimiter> limiter_;
  const ClientCertMap* certs_ = nullptr;
  const core::SelfCredential* self_ = nullptr;
  tasks::ReadExecutor* reads_ = nullptr;
};

/// The credential a request presents: the token of `Authorization: Bearer` (scheme
/// case-insensitive), else X-API-Key; "" for none.
std::string_view PresentedCredential(const HttpRequest& request);

/// The call context of `request` on `binding`: its authenticated principal, or the anonymous
/// development caller when nothing authenticated it.
protocol::CallContext CallerContext(const HttpRequest& request, protocol::Binding binding,
                                    protocol::WireVersion version);

/// Authenticates `request` with `auth` and sets its principal; nullopt then. Else the answer
/// refusing it: `shape(e)` (the error body of the request's surface) and, for a 401,
/// `WWW-Authenticate: Bearer realm="a2ad"` (with error="invalid_token" when a credential was
/// presented, RFC 6750 §3.1). A caller past its rate limit (Authenticator::Throttle) gets
/// `shape(e)` of the kRateLimited error with `Retry-After: <seconds>`. The router (and the golden
/// drivers of tests) use it. `request` must stay alive until it completes.
boost::asio::awaitable<std::optional<HttpResponse>> Admit(
    Authenticator& auth, HttpRequest& request,
    std::function<HttpResponse(const core::Error&)> shape);

/// kPermissionDenied naming `scope` unless `ctx` has it ("" needs none).
std::optional<core::Error> RequireScope(const protocol::CallContext& ctx, std::string_view scope);

/// `r` (the 403 answering `denied`, a RequireScope refusal) with the challenge of RFC 6750
/// §3.1: `WWW-Authenticate: Bearer realm="a2ad", error="insufficient_scope", scope="<s>"`.
HttpResponse WithScopeChallenge(HttpResponse r, const core::Error& denied);

}  // namespace a2ad::transport

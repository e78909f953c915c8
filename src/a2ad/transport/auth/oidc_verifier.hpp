#pragma once
// Bearer JWTs from an OpenID Connect issuer (issue 14): OidcVerifier turns a token into the
// principal of a call. The Authenticator (auth.hpp) hands it every credential shaped like a
// JWT when the server has an issuer (--oidc-issuer); API keys (a2ad_k_...) still go to the
// key store.
//
// Verification: protocol/jwt.hpp (RS256, PS256 or ES256 and nothing else; the alg must fit the
// key; `iss` exactly the issuer; `aud` names the audience; `exp` required; `nbf`, `iat`
// honoured; a leeway for clock skew).
//
// The principal (protocol::Principal):
// - id: "oidc:" + the principal claim (default `sub`, a non-empty string), so that it can
//   never equal an API key's id;
// - tenant: the tenant claim (default `tenant`, a non-empty string of at most 128 characters).
//   A token without it is refused (kUnauthenticated saying so) unless `default_tenant` is set,
//   which is then its tenant: guessing a tenant would put a caller's tasks where others see
//   them;
// - scopes: the scope claim (default `scope`), a space-separated string or an array of
//   strings; when that claim is `scope` and absent, `scp` is read the same way. Only the
//   scopes a2ad checks count (auth.hpp kKnownScopes; others are dropped); `admin` is every
//   scope. A token without scopes authenticates, and every operation answers it 403.
//
// The issuer's keys (its JWKS) come through the server's one egress client
// (net/http_client.hpp: the SSRF guard and policy of every outbound call) from `jwks_url`, or
// from the `jwks_uri` of `<issuer>/.well-known/openid-configuration`, whose `issuer` must be
// ours (OpenID Connect Discovery §4.3).
// - Start() fetches them once in the background, so that the first request need not wait; a
//   failure there is logged, not fatal.
// - A key set is kept for the max-age of its response's Cache-Control, clamped to
//   [min_max_age, max_max_age] (default_max_age without one). The first request that finds it
//   older starts a fetch in the background and goes on with the keys it has; keys stay in use
//   until a fetch succeeds, so an unreachable issuer does not lock out every caller at once.
// - A token whose kid is not in the set (the issuer rotated its keys), or any token while no
//   set is held, waits for a fetch. Fetches are single-flight: every request that needs keys
//   waits for the one fetch in progress. And requests start at most one fetch per
//   `refresh_interval`: past that, an unknown kid is refused at once, so tokens with made-up
//   kids cannot make the server hammer the issuer. (A scheduled fetch, Start's or a max-age
//   one, does not count against that budget.)
// - Each HTTP exchange is bounded by `fetch_timeout` (connect: `connect_timeout`), so a
//   request waits at most about twice that (discovery, then the JWKS).
// - Without any key set, or while fetches fail, a token that needs keys is refused with
//   kUnavailable (HTTP 503, gRPC UNAVAILABLE): the token may be good, but the server cannot
//   judge it now. A failing issuer is logged once at warn (at debug while it keeps failing,
//   at info when it answers again), never per request.
//
// Errors of Authenticate: kUnauthenticated saying what is wrong with the token (never the
// token, nor text taken from it); kUnavailable as above.
//
// Thread safety: every member may be called from any thread at once. One mutex guards the key
// set and the fetch state; nothing waits or does I/O under it.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/protocol/call_context.hpp"

namespace a2ad::transport {

struct OidcOptions {
  std::string issuer;    // required: the `iss` of every token, and where discovery starts
  std::string audience;  // required: what `aud` must name
  std::string jwks_url;  // "" = the jwks_uri of the issuer's discovery document
  std::string tenant_claim = "tenant";
  std::string scope_claim = "scope";
  std::string principal_claim = "sub";
  std::string default_tenant;  // "" = a token without the tenant claim is refused
  int64_t leeway_s = 60;
  int64_t refresh_interval_ms = 30'000;  // at most one fetch started by requests per interval
  int64_t default_max_age_ms = 600'000;  // a key set's life without Cache-Control max-age
  int64_t min_max_age_ms = 60'000;
  int64_t max_max_age_ms = 86'400'000;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds fetch_timeout{5000};  // one HTTP exchange, connect to last byte
  size_t max_response_bytes = size_t{512} * 1024;
};

/// `<issuer>/.well-known/openid-configuration` (a trailing '/' of the issuer dropped first).
std::string OidcDiscoveryUrl(std::string_view issuer);

class OidcVerifier {
 public:
  /// kInvalidParams naming the option at fault: an empty issuer, audience or claim name, a
  /// negative leeway or interval. `client` and `clock` must outlive the verifier; fetches run
  /// on `executor`, whose threads must run while requests wait for keys.
  static core::Result<std::unique_ptr<OidcVerifier>> Create(OidcOptions options,
                                                            const net::HttpClient& client,
                                                            const core::Clock& clock,
                                                            boost::asio::any_io_executor executor);
  ~OidcVerifier();
  OidcVerifier(const OidcVerifier&) = delete;
  OidcVerifier& operator=(const OidcVerifier&) = delete;

  /// Starts fetching the keys in the background (see the file comment). Once.
  void Start();

  /// The principal of `token` (see the file comment), waiting for keys when it must. Runs on
  /// the caller's executor; the fetch it may wait for runs on the verifier's.
  boost::asio::awaitable<core::Result<protocol::Principal>> Authenticate(std::string token);

  /// Authenticate for a thread that may block (the gRPC binding's threads), never a thread of
  /// the verifier's executor: answers at once when no fetch is needed, else waits for one at
  /// most 2 x fetch_timeout + 1 s (then kUnavailable).
  core::Result<protocol::Principal> AuthenticateBlocking(const std::string& token);

  const OidcOptions& options() const;

 private:
  struct State;
  explicit OidcVerifier(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;  // shared with fetches in flight
};

}  // namespace a2ad::transport

#pragma once
// An OpenID Connect issuer for tests: signing keys made with OpenSSL (RSA 2048, EC P-256), a
// real HTTP/1.1 server on 127.0.0.1:<ephemeral port> serving its discovery document
// (/.well-known/openid-configuration) and JWKS (/jwks) and counting the fetches of each, and
// tokens signed with its keys, or forged (alg none, HS256 with the public key as the secret).
//
// Thread safety: every member may be called from any thread (one mutex); the server answers
// each connection on its own thread.
#include <openssl/types.h>

#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace a2ad::testing {

class TestSigningKey {
 public:
  static TestSigningKey Rsa(std::string kid, int bits = 2048);
  static TestSigningKey Ec(std::string kid);
  const std::string& kid() const { return kid_; }
  bool rsa() const { return rsa_; }
  /// RS256 for RSA, ES256 for EC.
  std::string alg() const { return rsa_ ? "RS256" : "ES256"; }
  /// The public JWK {"kty", ..., "kid", "use":"sig"} (with `alg` when `with_alg`).
  boost::json::object Jwk(bool with_alg = true) const;
  /// The public key as PEM text ("BEGIN PUBLIC KEY"), the secret of an HS256 forgery.
  std::string PublicPem() const;
  /// The raw JWS signature of `input` with `alg` (RS256, PS256: RSA; ES256: EC, R||S).
  std::string Sign(std::string_view alg, std::string_view input) const;

 private:
  std::string kid_;
  bool rsa_ = true;
  std::shared_ptr<EVP_PKEY> key_;
};

/// A compact JWS: base64url(header).base64url(claims).base64url(signature). The header is
/// {"alg": alg (default the key's), "typ": "JWT", "kid": the key's kid} plus `extra` (which
/// replaces members of the same name; a member set to null is removed).
std::string SignJwt(const TestSigningKey& key, const boost::json::object& claims,
                    std::string alg = "", const boost::json::object& extra = {});
/// {"alg":"none"}.claims. (empty signature).
std::string UnsignedJwt(const boost::json::object& claims);
/// An HS256 JWT with `secret` as the HMAC key (the alg-confusion forgery), kid `kid`.
std::string HmacJwt(std::string_view secret, const boost::json::object& claims,
                    const std::string& kid);

class TestIssuer {
 public:
  /// Serves one RSA key ("rsa-1") and one EC key ("ec-1").
  TestIssuer();
  ~TestIssuer();
  TestIssuer(const TestIssuer&) = delete;
  TestIssuer& operator=(const TestIssuer&) = delete;

  /// The issuer identifier: http://127.0.0.1:<port> (also the discovery document's issuer).
  std::string url() const;
  std::string jwks_url() const { return url() + "/jwks"; }
  uint16_t port() const { return port_; }

  const TestSigningKey& rsa() const { return rsa_; }
  const TestSigningKey& ec() const { return ec_; }

  /// The keys the JWKS lists from now on (a rotation).
  void SetKeys(std::vector<TestSigningKey> keys);
  /// The status of every answer from now on (200 by default; 500: the issuer is down).
  void SetStatus(int status);
  /// The Cache-Control header of the JWKS ("" none, the default).
  void SetCacheControl(std::string value);
  /// The issuer the discovery document names (default: url()).
  void SetDiscoveryIssuer(std::string issuer);
  /// Each answer waits this long first.
  void SetDelay(std::chrono::milliseconds delay);

  size_t jwks_fetches();
  size_t discovery_fetches();

  /// iss = url(), aud, sub, tenant (left out when ""), scope (left out when ""), iat = now_s,
  /// exp = now_s + 3600.
  boost::json::object Claims(const std::string& aud, const std::string& sub,
                             const std::string& tenant, const std::string& scope,
                             int64_t now_s) const;

 private:
  void Accept();
  void Serve(int fd);

  TestSigningKey rsa_;
  TestSigningKey ec_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  bool stopping_ = false;
  std::vector<TestSigningKey> keys_;
  int status_ = 200;
  std::string cache_control_;
  std::string discovery_issuer_;
  std::chrono::milliseconds delay_{0};
  size_t jwks_fetches_ = 0;
  size_t discovery_fetches_ = 0;
  std::vector<std::thread> workers_;
};

/// Seconds since the Unix epoch, now.
int64_t NowSeconds();

}  // namespace a2ad::testing

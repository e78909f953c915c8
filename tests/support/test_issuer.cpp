#include "test_issuer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <stdexcept>

#include "a2ad/core/encoding.hpp"

namespace a2ad::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

namespace {

std::shared_ptr<EVP_PKEY> Own(EVP_PKEY* k) {
  if (!k) throw std::runtime_error("test issuer: OpenSSL key generation failed");
  return std::shared_ptr<EVP_PKEY>(k, [](EVP_PKEY* p) { EVP_PKEY_free(p); });
}

std::string Bn(EVP_PKEY* key, const char* name, int pad = 0) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) throw std::runtime_error("test issuer: bn");
  const int size = pad ? pad : BN_num_bytes(bn);
  std::string out(static_cast<size_t>(size), '\0');
  BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), size);
  BN_free(bn);
  return out;
}

std::string B64(std::string_view s) { return core::Base64UrlEncode(s); }

}  // namespace

TestSigningKey TestSigningKey::Rsa(std::string kid, int bits) {
  TestSigningKey k;
  k.kid_ = std::move(kid);
  k.rsa_ = true;
  k.key_ = Own(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(bits)));
  return k;
}

TestSigningKey TestSigningKey::Ec(std::string kid) {
  TestSigningKey k;
  k.kid_ = std::move(kid);
  k.rsa_ = false;
  k.key_ = Own(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  return k;
}

json::object TestSigningKey::Jwk(bool with_alg) const {
  json::object o;
  if (rsa_) {
    o["kty"] = "RSA";
    o["n"] = B64(Bn(key_.get(), OSSL_PKEY_PARAM_RSA_N));
    o["e"] = B64(Bn(key_.get(), OSSL_PKEY_PARAM_RSA_E));
  } else {
    o["kty"] = "EC";
    o["crv"] = "P-256";
    o["x"] = B64(Bn(key_.get(), OSSL_PKEY_PARAM_EC_PUB_X, 32));
    o["y"] = B64(Bn(key_.get(), OSSL_PKEY_PARAM_EC_PUB_Y, 32));
  }
  o["kid"] = kid_;
  o["use"] = "sig";
  if (with_alg) o["alg"] = alg();
  return o;
}

std::string TestSigningKey::PublicPem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key_.get());
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

std::string TestSigningKey::Sign(std::string_view alg, std::string_view input) const {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  EVP_PKEY_CTX* pctx = nullptr;
  if (EVP_DigestSignInit(md, &pctx, EVP_sha256(), nullptr, key_.get()) != 1)
    throw std::runtime_error("test issuer: sign init");
  if (alg == "PS256") {
    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
    EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256());
    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 32);
  }
  size_t len = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(input.data());
  EVP_DigestSign(md, nullptr, &len, in, input.size());
  std::string sig(len, '\0');
  if (EVP_DigestSign(md, reinterpret_cast<unsigned char*>(sig.data()), &len, in, input.size()) != 1)
    throw std::runtime_error("test issuer: sign");
  sig.resize(len);
  EVP_MD_CTX_free(md);
  if (rsa_) return sig;
  // DER ECDSA-Sig-Value -> raw R||S.
  const auto* p = reinterpret_cast<const unsigned char*>(sig.data());
  ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(es), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(es), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(es);
  return raw;
}

std::string SignJwt(const TestSigningKey& key, const json::object& claims, std::string alg,
                    const json::object& extra) {
  if (alg.empty()) alg = key.alg();
  json::object header{{"alg", alg}, {"typ", "JWT"}, {"kid", key.kid()}};
  for (const auto& [k, v] : extra) {
    if (v.is_null())
      header.erase(k);
    else
      header[k] = v;
  }
  const std::string input = B64(json::serialize(header)) + "." + B64(json::serialize(claims));
  return input + "." + B64(key.Sign(alg, input));
}

std::string UnsignedJwt(const json::object& claims) {
  return B64(R"({"alg":"none","typ":"JWT"})") + "." + B64(json::serialize(claims)) + ".";
}

std::string HmacJwt(std::string_view secret, const json::object& claims, const std::string& kid) {
  const json::object header{{"alg", "HS256"}, {"typ", "JWT"}, {"kid", kid}};
  const std::string input = B64(json::serialize(header)) + "." + B64(json::serialize(claims));
  unsigned char mac[32];
  unsigned int len = sizeof mac;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." + B64(std::string_view(reinterpret_cast<const char*>(mac), len));
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- TestIssuer ---------------------------------------------------------------------------

TestIssuer::TestIssuer() : rsa_(TestSigningKey::Rsa("rsa-1")), ec_(TestSigningKey::Ec("ec-1")) {
  keys_ = {rsa_, ec_};
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 128) != 0)
    throw std::runtime_error("test issuer: cannot listen");
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  discovery_issuer_ = url();
  acceptor_ = std::thread([this] { Accept(); });
}

TestIssuer::~TestIssuer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  ::close(listen_fd_);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

std::string TestIssuer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void TestIssuer::SetKeys(std::vector<TestSigningKey> keys) {
  std::lock_guard lock(mu_);
  keys_ = std::move(keys);
}
void TestIssuer::SetStatus(int status) {
  std::lock_guard lock(mu_);
  status_ = status;
}
void TestIssuer::SetCacheControl(std::string value) {
  std::lock_guard lock(mu_);
  cache_control_ = std::move(value);
}
void TestIssuer::SetDiscoveryIssuer(std::string issuer) {
  std::lock_guard lock(mu_);
  discovery_issuer_ = std::move(issuer);
}
void TestIssuer::SetDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  delay_ = delay;
}
size_t TestIssuer::jwks_fetches() {
  std::lock_guard lock(mu_);
  return jwks_fetches_;
}
size_t TestIssuer::discovery_fetches() {
  std::lock_guard lock(mu_);
  return discovery_fetches_;
}

json::object TestIssuer::Claims(const std::string& aud, const std::string& sub,
                                const std::string& tenant, const std::string& scope,
                                int64_t now_s) const {
  json::object c{{"iss", url()}, {"aud", aud}, {"sub", sub}, {"iat", now_s}, {"exp", now_s + 3600}};
  if (!tenant.empty()) c["tenant"] = tenant;
  if (!scope.empty()) c["scope"] = scope;
  return c;
}

void TestIssuer::Accept() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard lock(mu_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) continue;
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestIssuer::Serve(int fd) {
  asio::io_context io;
  asio::ip::tcp::socket sock(io, asio::ip::tcp::v4(), fd);
  beast::flat_buffer buf;
  for (;;) {
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(sock, buf, req, ec);
    if (ec) break;
    http::response<http::string_body> res(http::status::not_found, 11);
    std::chrono::milliseconds delay;
    {
      std::lock_guard lock(mu_);
      delay = delay_;
      const std::string target(req.target());
      if (target == "/.well-known/openid-configuration") {
        ++discovery_fetches_;
        res.result(static_cast<http::status>(status_));
        res.body() = json::serialize(
            json::object{{"issuer", discovery_issuer_},
                         {"jwks_uri", url() + "/jwks"},
                         {"id_token_signing_alg_values_supported", json::array{"RS256", "ES256"}}});
      } else if (target == "/jwks") {
        ++jwks_fetches_;
        res.result(static_cast<http::status>(status_));
        json::array keys;
        for (const auto& k : keys_) keys.push_back(k.Jwk());
        res.body() = json::serialize(json::object{{"keys", keys}});
        if (!cache_control_.empty()) res.set(http::field::cache_control, cache_control_);
      }
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    res.set(http::field::content_type, "application/json");
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(sock, res, ec);
    if (ec || !req.keep_alive()) break;
  }
  boost::system::error_code ignored;
  sock.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace a2ad::testing

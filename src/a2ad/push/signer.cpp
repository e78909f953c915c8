#include "a2ad/push/signer.hpp"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/core/encoding.hpp"

namespace a2ad::push {
namespace json = boost::json;
namespace fs = std::filesystem;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr int64_t kRetireSkewMs = 60000;

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

std::string OpensslError(std::string_view what) {
  char buf[256];
  unsigned long e = ERR_get_error();
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return std::string(what) + ": " + buf;
}

std::string Sha256(std::string_view data) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  return std::string(reinterpret_cast<char*>(d), sizeof d);
}

std::string Hex(std::string_view bytes) {
  static const char* k = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += k[c >> 4];
    out += k[c & 15];
  }
  return out;
}

// The uncompressed public point as 32-byte x and y.
bool PublicXY(EVP_PKEY* key, std::string& x, std::string& y) {
  BIGNUM* bx = nullptr;
  BIGNUM* by = nullptr;
  bool ok = EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, &bx) == 1 &&
            EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, &by) == 1;
  if (ok) {
    x.assign(32, '\0');
    y.assign(32, '\0');
    ok = BN_bn2binpad(bx, reinterpret_cast<unsigned char*>(x.data()), 32) == 32 &&
         BN_bn2binpad(by, reinterpret_cast<unsigned char*>(y.data()), 32) == 32;
  }
  BN_free(bx);
  BN_free(by);
  return ok;
}

Result<std::string> SignEs256(EVP_PKEY* key, std::string_view input) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  std::string der;
  bool ok = ctx && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
            EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()) == 1;
  if (ok) {
    der.resize(len);
    ok = EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(der.data()), &len,
                        reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
    der.resize(len);
  }
  EVP_MD_CTX_free(ctx);
  if (!ok) return Error(ErrorCode::kInternal, OpensslError("ES256 sign"));
  // DER ECDSA-Sig-Value -> JWS raw r||s.
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  if (!sig) return Error(ErrorCode::kInternal, OpensslError("ES256 signature decode"));
  std::string raw(64, '\0');
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig, &r, &s);
  ok = BN_bn2binpad(r, reinterpret_cast<unsigned char*>(raw.data()), 32) == 32 &&
       BN_bn2binpad(s, reinterpret_cast<unsigned char*>(raw.data()) + 32, 32) == 32;
  ECDSA_SIG_free(sig);
  if (!ok) return Error(ErrorCode::kInternal, "ES256 signature encode");
  return raw;
}

bool VerifyEs256(EVP_PKEY* key, std::string_view input, std::string_view raw) {
  if (raw.size() != 64) return false;
  ECDSA_SIG* sig = ECDSA_SIG_new();
  BIGNUM* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), 32, nullptr);
  BIGNUM* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()) + 32, 32, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig, r, s) != 1) {
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    return false;
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig, &der);
  ECDSA_SIG_free(sig);
  if (der_len <= 0) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      ctx && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, der, static_cast<size_t>(der_len),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  OPENSSL_free(der);
  ERR_clear_error();
  return ok;
}

Pkey PublicFromXY(std::string_view x, std::string_view y) {
  std::string point = "\x04" + std::string(x) + std::string(y);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM* params = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  EVP_PKEY* key = nullptr;
  if (bld && ctx &&
      OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
      OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) ==
          1 &&
      (params = OSSL_PARAM_BLD_to_param(bld)) && EVP_PKEY_fromdata_init(ctx) == 1) {
    if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = nullptr;
  }
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  EVP_PKEY_CTX_free(ctx);
  ERR_clear_error();
  return Pkey(key);
}

Result<void> WriteFile0600(const fs::path& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error(ErrorCode::kInternal, "cannot write " + path.string());
  ::fchmod(fd, 0600);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n <= 0) {
      ::close(fd);
      return Error(ErrorCode::kInternal, "cannot write " + path.string());
    }
    off += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  return core::Ok{};
}

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kInternal, "cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t DirMtimeNs(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes));
  return Hex(raw);
}

}  // namespace

std::string TokenFingerprint(std::string_view token) {
  if (token.empty()) return "";
  return "sha256:" + core::Base64UrlEncode(Sha256(token)).substr(0, 16);
}

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return Hex(std::string_view(reinterpret_cast<char*>(out), len));
}

std::string JwtKid(std::string_view jwt) {
  auto dot = jwt.find('.');
  if (dot == std::string_view::npos) return "";
  auto header = core::Base64UrlDecode(jwt.substr(0, dot));
  if (!header) return "";
  auto parsed = protocol::ParseJson(*header);
  if (!parsed || !parsed->is_object()) return "";
  const json::value& h = parsed.value();
  const json::value* kid = h.as_object().if_contains("kid");
  return kid && kid->is_string() ? std::string(kid->get_string()) : "";
}

// ---- KeyStore ---------------------------------------------------------------------------

struct KeyStore::Key {
  KeyInfo info;
  Pkey pkey;
  std::string x, y;
};

KeyStore::KeyStore(std::string dir, const core::Clock& clock, int64_t token_lifetime_ms)
    : dir_(std::move(dir)), clock_(clock), token_lifetime_ms_(token_lifetime_ms) {}
KeyStore::~KeyStore() = default;

Result<std::unique_ptr<KeyStore>> KeyStore::Open(std::string dir, const core::Clock& clock,
                                                 int64_t token_lifetime_ms) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error(ErrorCode::kInternal, "cannot create key directory " + dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  std::unique_ptr<KeyStore> store(new KeyStore(std::move(dir), clock, token_lifetime_ms));
  std::lock_guard lock(store->mu_);
  if (auto loaded = store->LoadLocked(); !loaded) return std::move(loaded).error();
  bool active = false;
  for (const auto& k : store->keys_) active = active || k->info.retired_at_ms == 0;
  if (!active) {
    auto made = store->CreateKeyLocked();
    if (!made) return std::move(made).error();
    if (auto loaded = store->LoadLocked(); !loaded) return std::move(loaded).error();
  }
  return store;
}

Result<void> KeyStore::LoadLocked() {
  dir_mtime_ns_ = DirMtimeNs(dir_);
  std::vector<std::unique_ptr<Key>> keys;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() != ".json") continue;
    auto meta_text = ReadFile(entry.path());
    if (!meta_text) return std::move(meta_text).error();
    auto parsed = protocol::ParseJson(*meta_text);
    const json::value meta = parsed ? std::move(parsed).value() : json::value();
    auto key = std::make_unique<Key>();
    if (!meta.is_object() || !meta.as_object().contains("kid"))
      return Error(ErrorCode::kInternal, "malformed key file " + entry.path().string());
    key->info.kid = std::string(meta.at("kid").as_string());
    key->info.created_at_ms = meta.at("createdAtMs").to_number<int64_t>();
    key->info.retired_at_ms = meta.at("retiredAtMs").to_number<int64_t>();
    fs::path pem = entry.path();
    pem.replace_extension(".pem");
    auto pem_text = ReadFile(pem);
    if (!pem_text) return std::move(pem_text).error();
    BIO* bio = BIO_new_mem_buf(pem_text->data(), static_cast<int>(pem_text->size()));
    key->pkey.reset(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr));
    BIO_free(bio);
    if (!key->pkey || !PublicXY(key->pkey.get(), key->x, key->y))
      return Error(ErrorCode::kInternal, OpensslError("unreadable private key " + pem.string()));
    keys.push_back(std::move(key));
  }
  if (ec) return Error(ErrorCode::kInternal, "cannot list key directory " + dir_);
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
    return a->info.created_at_ms != b->info.created_at_ms
               ? a->info.created_at_ms < b->info.created_at_ms
               : a->info.kid < b->info.kid;
  });
  keys_ = std::move(keys);
  return core::Ok{};
}

Result<void> KeyStore::ReloadIfChangedLocked() {
  if (DirMtimeNs(dir_) == dir_mtime_ns_) return core::Ok{};
  return LoadLocked();
}

Result<std::string> KeyStore::CreateKeyLocked() {
  Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return Error(ErrorCode::kInternal, OpensslError("P-256 key generation"));
  const int64_t now = clock_.NowMs();
  std::string kid = core::FormatTimestamp(now).substr(0, 10) + "-" + RandomHex(6);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  const fs::path base = fs::path(dir_) / kid;
  if (auto w = WriteFile0600(fs::path(base).replace_extension(".pem"), pem); !w)
    return std::move(w).error();
  json::object meta{{"kid", kid}, {"createdAtMs", now}, {"retiredAtMs", 0}};
  // Metadata last: a key without its .json is never loaded.
  if (auto w = WriteFile0600(fs::path(base).replace_extension(".json"), protocol::SerializeJson(meta)); !w)
    return std::move(w).error();
  return kid;
}

void KeyStore::PurgeLocked() {
  const int64_t now = clock_.NowMs();
  for (auto it = keys_.begin(); it != keys_.end();) {
    const KeyInfo& k = (*it)->info;
    if (k.retired_at_ms != 0 && k.retired_at_ms + token_lifetime_ms_ + kRetireSkewMs < now) {
      std::error_code ec;
      fs::remove(fs::path(dir_) / (k.kid + ".json"), ec);
      fs::remove(fs::path(dir_) / (k.kid + ".pem"), ec);
      it = keys_.erase(it);
    } else {
      ++it;
    }
  }
}

Result<std::string> KeyStore::Rotate() {
  std::lock_guard lock(mu_);
  if (auto r = ReloadIfChangedLocked(); !r) return std::move(r).error();
  auto made = CreateKeyLocked();
  if (!made) return made;
  const int64_t now = clock_.NowMs();
  for (const auto& k : keys_) {
    if (k->info.retired_at_ms != 0) continue;
    json::object meta{
        {"kid", k->info.kid}, {"createdAtMs", k->info.created_at_ms}, {"retiredAtMs", now}};
    if (auto w = WriteFile0600(fs::path(dir_) / (k->info.kid + ".json"), protocol::SerializeJson(meta)); !w)
      return std::move(w).error();
  }
  if (auto r = LoadLocked(); !r) return std::move(r).error();
  PurgeLocked();
  dir_mtime_ns_ = DirMtimeNs(dir_);
  return made;
}

Result<std::string> KeyStore::Sign(const json::object& claims) {
  std::lock_guard lock(mu_);
  if (auto r = ReloadIfChangedLocked(); !r) return std::move(r).error();
  const Key* active = nullptr;
  for (const auto& k : keys_)
    if (k->info.retired_at_ms == 0) active = k.get();  // newest active wins
  if (!active) return Error(ErrorCode::kInternal, "no active signing key in " + dir_);
  json::object header{{"alg", "ES256"}, {"typ", "JWT"}, {"kid", active->info.kid}};
  std::string input = core::Base64UrlEncode(protocol::SerializeJson(header)) + "." +
                      core::Base64UrlEncode(protocol::SerializeJson(claims));
  auto sig = SignEs256(active->pkey.get(), input);
  if (!sig) return std::move(sig).error();
  return input + "." + core::Base64UrlEncode(*sig);
}

std::string KeyStore::Jwks() {
  std::lock_guard lock(mu_);
  (void)ReloadIfChangedLocked();
  PurgeLocked();
  json::array keys;
  for (const auto& k : keys_) {
    keys.push_back(json::object{{"kty", "EC"},
                                {"crv", "P-256"},
                                {"x", core::Base64UrlEncode(k->x)},
                                {"y", core::Base64UrlEncode(k->y)},
                                {"kid", k->info.kid},
                                {"alg", "ES256"},
                                {"use", "sig"}});
  }
  return protocol::SerializeJson(json::object{{"keys", std::move(keys)}});
}

std::vector<KeyInfo> KeyStore::keys() {
  std::lock_guard lock(mu_);
  (void)ReloadIfChangedLocked();
  std::vector<KeyInfo> out;
  for (const auto& k : keys_) out.push_back(k->info);
  return out;
}

// ---- JwtVerifier ------------------------------------------------------------------------

struct JwtVerifier::PublicKey {
  Pkey pkey;
};

JwtVerifier::JwtVerifier(VerifyOptions options, const core::Clock& clock)
    : options_(std::move(options)), clock_(clock) {}
JwtVerifier::~JwtVerifier() = default;

Result<void> JwtVerifier::SetJwks(std::string_view jwks_json) {
  auto parsed = protocol::ParseJson(jwks_json);
  if (!parsed) return Error(ErrorCode::kInvalidParams, "JWKS: " + parsed.error().message);
  const json::value& doc = parsed.value();
  if (!doc.is_object() || !doc.as_object().contains("keys") || !doc.at("keys").is_array())
    return Error(ErrorCode::kInvalidParams, "JWKS: expected {\"keys\": [...]}");
  std::map<std::string, std::unique_ptr<PublicKey>, std::less<>> keys;
  for (const auto& k : doc.at("keys").as_array()) {
    if (!k.is_object()) continue;
    const auto& o = k.as_object();
    auto str = [&](const char* name) -> std::string {
      const json::value* v = o.if_contains(name);
      return v && v->is_string() ? std::string(v->get_string()) : "";
    };
    if (str("kty") != "EC" || str("crv") != "P-256" || str("kid").empty()) continue;
    auto x = core::Base64UrlDecode(str("x"));
    auto y = core::Base64UrlDecode(str("y"));
    if (!x || !y || x->size() != 32 || y->size() != 32)
      return Error(ErrorCode::kInvalidParams, "JWKS key " + str("kid") + ": bad x/y");
    auto pk = std::make_unique<PublicKey>();
    pk->pkey = PublicFromXY(*x, *y);
    if (!pk->pkey)
      return Error(ErrorCode::kInvalidParams, "JWKS key " + str("kid") + ": not a P-256 point");
    keys[str("kid")] = std::move(pk);
  }
  std::lock_guard lock(mu_);
  keys_ = std::move(keys);
  return core::Ok{};
}

bool JwtVerifier::HasKey(std::string_view kid) {
  std::lock_guard lock(mu_);
  return keys_.find(kid) != keys_.end();
}

Result<json::object> JwtVerifier::Verify(std::string_view jwt) {
  auto refuse = [](std::string why) {
    return Error(ErrorCode::kInvalidParams, "JWT refused: " + why);
  };
  auto d1 = jwt.find('.');
  auto d2 = d1 == jwt.npos ? jwt.npos : jwt.find('.', d1 + 1);
  if (d2 == jwt.npos || jwt.find('.', d2 + 1) != jwt.npos)
    return refuse("not a compact JWS (three dot-separated parts)");
  auto header_text = core::Base64UrlDecode(jwt.substr(0, d1));
  auto claims_text = core::Base64UrlDecode(jwt.substr(d1 + 1, d2 - d1 - 1));
  auto sig = core::Base64UrlDecode(jwt.substr(d2 + 1));
  if (!header_text || !claims_text || !sig) return refuse("a part is not base64url");
  auto header_doc = protocol::ParseJson(*header_text);
  if (!header_doc || !header_doc->is_object()) return refuse("header is not a JSON object");
  auto claims_doc = protocol::ParseJson(*claims_text);
  if (!claims_doc || !claims_doc->is_object()) return refuse("claims are not a JSON object");
  const json::value& header = header_doc.value();
  const json::value& claims = claims_doc.value();
  const auto* alg = header.as_object().if_contains("alg");
  if (!alg || !alg->is_string() || alg->get_string() != "ES256") return refuse("alg must be ES256");
  const auto* kid = header.as_object().if_contains("kid");
  if (!kid || !kid->is_string()) return refuse("header has no kid");
  const int64_t now = clock_.NowMs();
  std::lock_guard lock(mu_);
  auto key = keys_.find(std::string_view(kid->get_string()));
  if (key == keys_.end()) return refuse("unknown kid '" + std::string(kid->get_string()) + "'");
  if (!VerifyEs256(key->second->pkey.get(), jwt.substr(0, d2), *sig))
    return refuse("signature does not verify");
  const json::object& c = claims.as_object();
  auto str = [&](const char* name) -> std::string {
    const json::value* v = c.if_contains(name);
    return v && v->is_string() ? std::string(v->get_string()) : "";
  };
  auto num = [&](const char* name) -> std::optional<int64_t> {
    const json::value* v = c.if_contains(name);
    if (!v || !v->is_number()) return std::nullopt;
    return v->to_number<int64_t>();
  };
  if (!options_.issuer.empty() && str("iss") != options_.issuer)
    return refuse("iss '" + str("iss") + "' is not '" + options_.issuer + "'");
  if (!options_.audience.empty() && str("aud") != options_.audience)
    return refuse("aud '" + str("aud") + "' is not '" + options_.audience + "'");
  auto iat = num("iat");
  auto exp = num("exp");
  if (!iat || !exp) return refuse("iat and exp are required");
  if (*exp * 1000 + options_.skew_ms < now) return refuse("expired");
  if (*iat * 1000 - options_.skew_ms > now) return refuse("iat is in the future");
  if (*iat * 1000 + options_.max_age_ms + options_.skew_ms < now)
    return refuse("stale (iat too old)");
  std::string jti = str("jti");
  if (jti.empty()) return refuse("jti is required");
  for (auto it = seen_jti_.begin(); it != seen_jti_.end();)
    it = it->second + options_.skew_ms < now ? seen_jti_.erase(it) : std::next(it);
  if (seen_jti_.count(jti)) return refuse("jti '" + jti + "' was already used (replay)");
  seen_jti_[jti] = std::max(*exp * 1000, (*iat * 1000) + options_.max_age_ms);
  return c;
}

}  // namespace a2ad::push

#include "a2ad/push/signer.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/es256.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/jws.hpp"

namespace a2ad::push {
namespace json = boost::json;
namespace fs = std::filesystem;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr int64_t kRetireSkewMs = 60000;

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
  return core::HexEncode(raw);
}

}  // namespace

std::string TokenFingerprint(std::string_view token) {
  if (token.empty()) return "";
  return "sha256:" + core::Base64UrlEncode(core::Sha256(token)).substr(0, 16);
}

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return core::HexEncode(std::string_view(reinterpret_cast<char*>(out), len));
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
  core::Es256PrivateKey key;
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
    auto private_key = core::Es256PrivateKey::FromPem(*pem_text);
    if (!private_key)
      return Error(ErrorCode::kInternal,
                   "unreadable private key " + pem.string() + ": " + private_key.error().message);
    key->key = std::move(private_key).value();
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
  auto key = core::Es256PrivateKey::Generate();
  if (!key) return std::move(key).error();
  const int64_t now = clock_.NowMs();
  std::string kid = core::FormatTimestamp(now).substr(0, 10) + "-" + RandomHex(6);
  const std::string pem = key->ToPem();
  const fs::path base = fs::path(dir_) / kid;
  if (auto w = WriteFile0600(fs::path(base).replace_extension(".pem"), pem); !w)
    return std::move(w).error();
  json::object meta{{"kid", kid}, {"createdAtMs", now}, {"retiredAtMs", 0}};
  // Metadata last: a key without its .json is never loaded.
  if (auto w =
          WriteFile0600(fs::path(base).replace_extension(".json"), protocol::SerializeJson(meta));
      !w)
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
    if (auto w =
            WriteFile0600(fs::path(dir_) / (k->info.kid + ".json"), protocol::SerializeJson(meta));
        !w)
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
  auto sig = active->key.Sign(input);
  if (!sig) return std::move(sig).error();
  return input + "." + core::Base64UrlEncode(*sig);
}

json::array KeyStore::PublicJwks() {
  std::lock_guard lock(mu_);
  (void)ReloadIfChangedLocked();
  PurgeLocked();
  json::array keys;
  for (const auto& k : keys_) keys.push_back(protocol::PublicJwk(k->key.public_key(), k->info.kid));
  return keys;
}

std::string KeyStore::Jwks() {
  return protocol::SerializeJson(json::object{{"keys", PublicJwks()}});
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
  core::Es256PublicKey key;
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
    auto public_key = core::Es256PublicKey::FromXY(*x, *y);
    if (!public_key)
      return Error(ErrorCode::kInvalidParams, "JWKS key " + str("kid") + ": not a P-256 point");
    pk->key = std::move(public_key).value();
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
  if (!key->second->key.Verify(jwt.substr(0, d2), *sig)) return refuse("signature does not verify");
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

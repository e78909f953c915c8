#include "a2ad/push/signer.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/es256.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/core/sha256.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/jws.hpp"
#include "a2ad/push/key_directory.hpp"

namespace a2ad::push {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr int64_t kRetireSkewMs = 60000;

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes));
  return core::HexEncode(raw);
}

// A new key for the ring, made at `now_ms` (kid: its UTC date and 12 random hex digits).
Result<storage::RingKey> NewRingKey(int64_t now_ms) {
  auto key = core::Es256PrivateKey::Generate();
  if (!key) return std::move(key).error();
  storage::RingKey k;
  k.kid = core::FormatTimestamp(now_ms).substr(0, 10) + "-" + RandomHex(6);
  k.private_pem = key->ToPem();
  k.created_at_ms = now_ms;
  return k;
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

KeyStore::KeyStore(std::unique_ptr<storage::KeyRing> ring, const core::Clock& clock,
                   KeyStoreOptions options)
    : ring_(std::move(ring)),
      clock_(clock),
      token_lifetime_ms_(options.token_lifetime_ms),
      refresh_ms_(options.refresh_ms) {}

KeyStore::~KeyStore() { Stop(); }

Result<std::unique_ptr<KeyStore>> KeyStore::Open(std::string dir, const core::Clock& clock,
                                                 int64_t token_lifetime_ms) {
  auto ring = OpenKeyDirectory(std::move(dir));
  if (!ring) return std::move(ring).error();
  KeyStoreOptions options;
  options.token_lifetime_ms = token_lifetime_ms;
  return Open(std::move(ring).value(), clock, options);
}

Result<std::unique_ptr<KeyStore>> KeyStore::Open(std::unique_ptr<storage::KeyRing> ring,
                                                 const core::Clock& clock,
                                                 KeyStoreOptions options) {
  std::unique_ptr<KeyStore> store(new KeyStore(std::move(ring), clock, options));
  {
    std::scoped_lock lock(store->load_mu_, store->mu_);
    if (auto loaded = store->LoadLocked(); !loaded) return std::move(loaded).error();
    const auto active = [](const auto& k) { return k->info.retired_at_ms == 0; };
    if (std::none_of(store->keys_.begin(), store->keys_.end(), active)) {
      auto fresh = NewRingKey(clock.NowMs());
      if (!fresh) return std::move(fresh).error();
      // Only if still none: on a shared ring another server may have stored one meanwhile.
      if (auto stored = store->ring_->Rotate(*fresh, true, 0); !stored)
        return std::move(stored).error();
      if (auto loaded = store->LoadLocked(); !loaded) return std::move(loaded).error();
      if (std::none_of(store->keys_.begin(), store->keys_.end(), active))
        return Error(ErrorCode::kInternal, "no active signing key in " + store->ring_->Where());
    }
  }
  if (store->refresh_ms_ > 0)
    store->refresher_ = std::thread([s = store.get()] { s->RefreshLoop(); });
  return store;
}

void KeyStore::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

Result<KeyStore::Keys> KeyStore::Parse(const storage::RingSnapshot& snapshot) const {
  Keys keys;
  for (const storage::RingKey& k : snapshot.keys) {
    auto private_key = core::Es256PrivateKey::FromPem(k.private_pem);
    if (!private_key)
      return Error(ErrorCode::kInternal, "unreadable private key " + k.kid + " in " +
                                             ring_->Where() + ": " + private_key.error().message);
    auto key = std::make_unique<Key>();
    key->info = KeyInfo{k.kid, k.created_at_ms, k.retired_at_ms};
    key->key = std::move(private_key).value();
    keys.push_back(std::move(key));
  }
  return keys;
}

Result<void> KeyStore::LoadLocked() {
  auto snapshot = ring_->Load();
  if (!snapshot) return std::move(snapshot).error();
  auto keys = Parse(*snapshot);
  if (!keys) return std::move(keys).error();
  keys_ = std::move(keys).value();
  version_ = snapshot->version;
  return core::Ok{};
}

Result<void> KeyStore::ReloadIfChangedLocked() {
  if (refresh_ms_ > 0) return core::Ok{};  // the refreshing thread's job
  auto version = ring_->Version();
  if (!version) return std::move(version).error();
  if (*version == version_) return core::Ok{};
  return LoadLocked();
}

bool KeyStore::Expired(const KeyInfo& k, int64_t now_ms) const {
  return k.retired_at_ms != 0 && k.retired_at_ms + token_lifetime_ms_ + kRetireSkewMs < now_ms;
}

void KeyStore::PurgeLocked() {
  // With a refreshing thread the keys stay held (and are only left out, Expired) until it has
  // deleted them from the ring; otherwise (a directory) they are deleted here.
  if (refresh_ms_ > 0) return;
  const int64_t now = clock_.NowMs();
  const auto expired = [&](const auto& k) { return Expired(k->info, now); };
  if (std::none_of(keys_.begin(), keys_.end(), expired)) return;
  keys_.erase(std::remove_if(keys_.begin(), keys_.end(), expired), keys_.end());
  (void)ring_->Purge(now - token_lifetime_ms_ - kRetireSkewMs);
}

Result<std::string> KeyStore::Rotate() {
  std::scoped_lock lock(load_mu_, mu_);
  const int64_t now = clock_.NowMs();
  auto fresh = NewRingKey(now);
  if (!fresh) return std::move(fresh).error();
  if (auto stored = ring_->Rotate(*fresh, false, now - token_lifetime_ms_ - kRetireSkewMs); !stored)
    return std::move(stored).error();
  if (auto r = LoadLocked(); !r) return std::move(r).error();
  return fresh->kid;
}

void KeyStore::RefreshLoop() {
  core::SetThreadName("a2ad-keys");
  std::unique_lock lock(stop_mu_);
  while (
      !stop_cv_.wait_for(lock, std::chrono::milliseconds(refresh_ms_), [&] { return stopping_; })) {
    lock.unlock();
    RefreshOnce();
    lock.lock();
  }
}

void KeyStore::RefreshOnce() {
  std::lock_guard load(load_mu_);
  const int64_t now = clock_.NowMs();
  bool stale = false;
  int64_t version = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& k : keys_) stale = stale || Expired(k->info, now);
    version = version_;
  }
  Result<void> outcome = core::Ok{};
  if (stale) {
    if (auto purged = ring_->Purge(now - token_lifetime_ms_ - kRetireSkewMs); !purged)
      outcome = std::move(purged).error();
  }
  auto current = ring_->Version();
  if (!current) outcome = current.error();
  if (outcome && *current != version) {
    auto snapshot = ring_->Load();
    auto keys = snapshot ? Parse(*snapshot) : Result<Keys>(snapshot.error());
    if (keys) {
      std::lock_guard lock(mu_);
      keys_ = std::move(keys).value();
      version_ = snapshot->version;
    } else {
      outcome = std::move(keys).error();
    }
  }
  if (!outcome && !failing_)
    core::LogWarn("push signing keys: cannot refresh from " + ring_->Where() + ": " +
                  outcome.error().message + "; signing with the keys held");
  else if (outcome && failing_)
    core::LogInfo("push signing keys: refreshed from " + ring_->Where() + " again");
  failing_ = !outcome;
}

Result<std::string> KeyStore::Sign(const json::object& claims) {
  std::lock_guard lock(mu_);
  if (auto r = ReloadIfChangedLocked(); !r) return std::move(r).error();
  const Key* active = nullptr;
  for (const auto& k : keys_)
    if (k->info.retired_at_ms == 0) active = k.get();  // newest active wins
  if (!active) return Error(ErrorCode::kInternal, "no active signing key in " + ring_->Where());
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
  const int64_t now = clock_.NowMs();
  json::array keys;
  for (const auto& k : keys_)
    if (!Expired(k->info, now))
      keys.push_back(protocol::PublicJwk(k->key.public_key(), k->info.kid));
  return keys;
}

std::string KeyStore::Jwks() {
  return protocol::SerializeJson(json::object{{"keys", PublicJwks()}});
}

std::vector<KeyInfo> KeyStore::keys() {
  std::lock_guard lock(mu_);
  (void)ReloadIfChangedLocked();
  const int64_t now = clock_.NowMs();
  std::vector<KeyInfo> out;
  for (const auto& k : keys_)
    if (!Expired(k->info, now)) out.push_back(k->info);
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
  auto refuse = [](const std::string& why) {
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

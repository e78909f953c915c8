#include "a2ad/core/api_key.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <charconv>
#include <cstdlib>
#include <ctime>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/sha256.hpp"

namespace a2ad::core {
namespace {

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    std::abort();  // no entropy: refuse to make a guessable key
  return out;
}

bool IsHex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool IsBase64Url(std::string_view s) {
  return s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
         std::string_view::npos;
}

bool Number(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

SelfCredential::SelfCredential() : key_(RandomBytes(32)) {}

std::string SelfCredential::Mac(std::string_view tenant) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(tenant.data()), tenant.size(), mac, &len);
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac), len));
}

std::string SelfCredential::For(std::string_view tenant) const {
  return std::string(kSelfCredentialPrefix) + Base64UrlEncode(tenant) + "." + Mac(tenant);
}

std::optional<std::string> SelfCredential::TenantOf(std::string_view presented) const {
  if (!presented.starts_with(kSelfCredentialPrefix)) return std::nullopt;
  presented.remove_prefix(kSelfCredentialPrefix.size());
  const size_t dot = presented.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto tenant = Base64UrlDecode(presented.substr(0, dot));
  if (!tenant || tenant->empty()) return std::nullopt;
  if (!ConstantTimeEquals(Mac(*tenant), presented.substr(dot + 1))) return std::nullopt;
  return tenant;
}

ApiKeyParts NewApiKey() {
  return ApiKeyParts{HexEncode(RandomBytes(8)), Base64UrlEncode(RandomBytes(32))};
}

std::string FormatApiKey(const ApiKeyParts& key) {
  return std::string(kApiKeyPrefix) + key.key_id + "_" + key.secret;
}

std::optional<ApiKeyParts> ParseApiKey(std::string_view text) {
  if (!text.starts_with(kApiKeyPrefix)) return std::nullopt;
  text.remove_prefix(kApiKeyPrefix.size());
  const size_t sep = text.find('_');
  if (sep != 16) return std::nullopt;
  ApiKeyParts parts{std::string(text.substr(0, sep)), std::string(text.substr(sep + 1))};
  if (!IsHex(parts.key_id) || parts.secret.empty() || parts.secret.size() > 256 ||
      !IsBase64Url(parts.secret))
    return std::nullopt;
  return parts;
}

std::string HashApiKeySecret(std::string_view secret) {
  return HexEncode(DigestBytes(Sha256Of(secret)));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<int64_t> ParseExpiry(std::string_view text, int64_t now_ms) {
  if (text.empty()) return std::nullopt;
  const char unit = text.back();
  int64_t n = 0;
  if ((unit == 'd' || unit == 'h' || unit == 'm' || unit == 's') &&
      Number(text.substr(0, text.size() - 1), n)) {
    const int64_t ms_per = unit == 'd'   ? 86400000
                           : unit == 'h' ? 3600000
                           : unit == 'm' ? 60000
                                         : 1000;
    if (n <= 0 || n > 36500LL * 86400000 / ms_per) return std::nullopt;
    return now_ms + n * ms_per;
  }
  // RFC 3339, UTC only: YYYY-MM-DDTHH:MM:SSZ (fractions not accepted).
  if (text.size() != 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':' ||
      (text[19] != 'Z' && text[19] != 'z'))
    return std::nullopt;
  int64_t year, mon, day, hour, min, sec;
  if (!Number(text.substr(0, 4), year) || !Number(text.substr(5, 2), mon) ||
      !Number(text.substr(8, 2), day) || !Number(text.substr(11, 2), hour) ||
      !Number(text.substr(14, 2), min) || !Number(text.substr(17, 2), sec))
    return std::nullopt;
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = static_cast<int>(year - 1900);
  tm.tm_mon = static_cast<int>(mon - 1);
  tm.tm_mday = static_cast<int>(day);
  tm.tm_hour = static_cast<int>(hour);
  tm.tm_min = static_cast<int>(min);
  tm.tm_sec = static_cast<int>(sec);
  const time_t t = timegm(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  const int64_t ms = static_cast<int64_t>(t) * 1000;
  if (ms <= now_ms) return std::nullopt;
  return ms;
}

}  // namespace a2ad::core

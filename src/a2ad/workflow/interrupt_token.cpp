#include "a2ad/workflow/interrupt_token.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/core/encoding.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {
std::string Mac(const std::string& secret, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}
}  // namespace

core::Result<InterruptTokens> InterruptTokens::Open(const std::filesystem::path& key_file) {
  std::error_code ec;
  if (std::filesystem::exists(key_file, ec)) {
    std::ifstream in(key_file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    std::string secret = s.str();
    if (secret.size() < 32)
      return Error(ErrorCode::kInternal, key_file.string() + ": interrupt token key is too short");
    return InterruptTokens(std::move(secret));
  }
  std::string secret(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(secret.data()), 32) != 1)
    return Error(ErrorCode::kInternal, "no randomness for the interrupt token key");
  const std::filesystem::path tmp = key_file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(secret.data(), static_cast<std::streamsize>(secret.size()));
    if (!out) return Error(ErrorCode::kInternal, "cannot write " + tmp.string());
  }
  ::chmod(tmp.c_str(), 0600);
  std::filesystem::rename(tmp, key_file, ec);
  if (ec)
    return Error(ErrorCode::kInternal, "cannot create " + key_file.string() + ": " + ec.message());
  return InterruptTokens(std::move(secret));
}

std::string InterruptTokens::Mint(const TokenClaims& c) const {
  json::object claims{{"runId", c.run_id},
                      {"nodeId", c.node_id},
                      {"interruptId", c.interrupt_id},
                      {"expiresAt", c.expires_at_ms},
                      {"intent", c.intent},
                      {"kid", kid_}};
  std::string body = core::Base64UrlEncode(protocol::SerializeJson(claims));
  return body + "." + core::Base64UrlEncode(Mac(secret_, body));
}

core::Result<TokenClaims> InterruptTokens::Verify(std::string_view token) const {
  auto bad = [] { return Error(ErrorCode::kInvalidParams, "not a valid interrupt token"); };
  size_t dot = token.find('.');
  if (dot == std::string_view::npos || token.size() > 4096) return bad();
  // Mint writes no padding; Base64UrlDecode would drop it, giving the token other spellings.
  if (token.find('=') != std::string_view::npos) return bad();
  std::string_view body = token.substr(0, dot);
  auto mac = core::Base64UrlDecode(token.substr(dot + 1));
  if (!mac) return bad();
  const std::string expect = Mac(secret_, body);
  if (mac->size() != expect.size() || CRYPTO_memcmp(mac->data(), expect.data(), mac->size()) != 0)
    return bad();
  auto text = core::Base64UrlDecode(body);
  if (!text) return bad();
  auto parsed = protocol::ParseJson(*text);
  if (!parsed || !parsed->is_object()) return bad();
  const json::value& v = parsed.value();
  const auto& o = v.get_object();
  TokenClaims c;
  auto str = [&](const char* k, std::string& out) {
    if (auto* x = o.if_contains(k); x && x->is_string()) {
      out = std::string(x->get_string());
      return true;
    }
    return false;
  };
  if (!str("runId", c.run_id) || !str("nodeId", c.node_id) || !str("interruptId", c.interrupt_id) ||
      !str("intent", c.intent))
    return bad();
  if (auto* x = o.if_contains("expiresAt"); x && x->is_int64())
    c.expires_at_ms = x->as_int64();
  else
    return bad();
  return c;
}

}  // namespace a2ad::workflow

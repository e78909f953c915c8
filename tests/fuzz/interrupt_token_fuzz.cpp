// interrupt_token_fuzz: the signed interrupt token (workflow/interrupt_token.hpp). The first
// input byte picks the mode; the rest is
//  - mode even: a token. It must not verify under the real key unless it is, byte for byte,
//    the token the key minted (a bearer credential has exactly one spelling);
//  - mode odd: claims text, signed here with the real key the way Mint signs. It verifies
//    iff it is a strict JSON object with string runId, nodeId, interruptId, intent and an
//    integer expiresAt, and then decodes to exactly those; Mint of the decoded claims
//    verifies back to them.
// Decoding never crashes either way.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/workflow/interrupt_token.hpp"
#include "fuzz_check.hpp"

namespace a2ad::fuzz {
namespace {
namespace json = boost::json;

const std::string kSecret = "a2ad fuzz interrupt token secret, 32+ bytes long";

std::string Sign(std::string_view body) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), kSecret.data(), static_cast<int>(kSecret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &len);
  return std::string(body) + "." +
         core::Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac), len));
}

bool SameClaims(const workflow::TokenClaims& a, const workflow::TokenClaims& b) {
  return a.run_id == b.run_id && a.node_id == b.node_id && a.interrupt_id == b.interrupt_id &&
         a.intent == b.intent && a.expires_at_ms == b.expires_at_ms;
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace a2ad;
  using namespace a2ad::fuzz;
  static const workflow::InterruptTokens tokens(kSecret);
  static const workflow::TokenClaims minted_claims{"id-0001", "approve", "int-1", 1767268800000,
                                                   "resolve"};
  static const std::string minted = tokens.Mint(minted_claims);
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);

  if ((data[0] & 1) == 0) {
    auto v = tokens.Verify(rest);
    if (rest == minted) {
      FUZZ_CHECK(v.ok() && SameClaims(v.value(), minted_claims), "the minted token fails");
    } else {
      FUZZ_CHECK(!v.ok(), "a token other than the minted one verifies: " + std::string(rest));
      FUZZ_CHECK(v.error().code == core::ErrorCode::kInvalidParams, v.error().message);
    }
    return 0;
  }

  const std::string token = Sign(core::Base64UrlEncode(rest));
  auto v = tokens.Verify(token);
  workflow::TokenClaims want;
  bool valid = false;
  if (rest.size() <= 3000) {  // Verify refuses tokens over 4096 characters
    if (auto doc = protocol::ParseJson(rest); doc && doc->is_object()) {
      const json::object& o = doc->get_object();
      auto str = [&o](const char* k, std::string& out) {
        const json::value* x = o.if_contains(k);
        if (!x || !x->is_string()) return false;
        out = std::string(x->get_string());
        return true;
      };
      const json::value* exp = o.if_contains("expiresAt");
      valid = str("runId", want.run_id) && str("nodeId", want.node_id) &&
              str("interruptId", want.interrupt_id) && str("intent", want.intent) && exp &&
              exp->is_int64();
      if (valid) want.expires_at_ms = exp->get_int64();
    }
  }
  if (rest.size() <= 3000) FUZZ_CHECK(v.ok() == valid, "verdict differs on signed claims");
  if (v.ok()) {
    FUZZ_CHECK(valid || rest.size() > 3000, "claims verified that should not");
    if (valid) FUZZ_CHECK(SameClaims(v.value(), want), "claims decoded differently");
    auto again = tokens.Verify(tokens.Mint(v.value()));
    FUZZ_CHECK(again.ok() && SameClaims(again.value(), v.value()), "Mint does not round-trip");
  }
  return 0;
}

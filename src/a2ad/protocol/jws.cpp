#include "a2ad/protocol/jws.hpp"

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/sha256.hpp"
#include "a2ad/protocol/jcs.hpp"
#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

json::object PublicJwk(const core::Es256PublicKey& key, std::string_view kid) {
  return json::object{{"kty", "EC"},
                      {"crv", "P-256"},
                      {"x", core::Base64UrlEncode(key.x())},
                      {"y", core::Base64UrlEncode(key.y())},
                      {"kid", kid},
                      {"use", "sig"},
                      {"alg", "ES256"}};
}

std::string JwkThumbprint(const core::Es256PublicKey& key) {
  const json::object required{{"crv", "P-256"},
                              {"kty", "EC"},
                              {"x", core::Base64UrlEncode(key.x())},
                              {"y", core::Base64UrlEncode(key.y())}};
  // Four ASCII strings: the canonical form always exists.
  return core::Base64UrlEncode(core::Sha256(CanonicalJson(required).value()));
}

Result<DetachedJws> SignDetachedJws(const json::object& header, std::string_view payload,
                                    const core::Es256PrivateKey& key) {
  const json::value* alg = header.if_contains("alg");
  if (!alg || !alg->is_string() || alg->get_string() != "ES256")
    return Error(ErrorCode::kInvalidParams, "JWS header: alg must be ES256");
  auto header_text = CanonicalJson(header);
  if (!header_text) return std::move(header_text).error();
  DetachedJws out;
  out.protected_header = core::Base64UrlEncode(*header_text);
  auto sig = key.Sign(out.protected_header + "." + core::Base64UrlEncode(payload));
  if (!sig) return std::move(sig).error();
  out.signature = core::Base64UrlEncode(*sig);
  return out;
}

Result<json::object> VerifyDetachedJws(const DetachedJws& jws, std::string_view payload,
                                       const core::Es256PublicKey& key) {
  auto refuse = [](std::string why) {
    return Error(ErrorCode::kInvalidParams, "JWS refused: " + std::move(why));
  };
  auto header_text = core::Base64UrlDecode(jws.protected_header);
  if (!header_text) return refuse("the protected header is not base64url");
  auto sig = core::Base64UrlDecode(jws.signature);
  if (!sig) return refuse("the signature is not base64url");
  auto header = ParseJsonObject(*header_text, "protected header");
  if (!header) return refuse(header.error().message);
  const json::value* alg = header->if_contains("alg");
  if (!alg || !alg->is_string() || alg->get_string() != "ES256") return refuse("alg must be ES256");
  if (header->contains("crit")) return refuse("crit names extensions this verifier lacks");
  if (!key.Verify(jws.protected_header + "." + core::Base64UrlEncode(payload), *sig))
    return refuse("the signature does not verify");
  return std::move(header).value();
}

}  // namespace a2ad::protocol

#include "a2ad/core/jws_public_key.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

namespace a2ad::core {

namespace {

constexpr size_t kMinRsaBits = 2048;
constexpr size_t kMaxRsaBits = 8192;

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string_view StripLeadingZeros(std::string_view s) {
  while (!s.empty() && s.front() == '\0') s.remove_prefix(1);
  return s;
}

size_t BitLength(std::string_view big_endian) {
  big_endian = StripLeadingZeros(big_endian);
  if (big_endian.empty()) return 0;
  size_t bits = (big_endian.size() - 1) * 8;
  for (auto top = static_cast<unsigned char>(big_endian.front()); top; top >>= 1) ++bits;
  return bits;
}

}  // namespace

std::optional<JwsAlg> ParseJwsAlg(std::string_view name) {
  if (name == "RS256") return JwsAlg::kRs256;
  if (name == "PS256") return JwsAlg::kPs256;
  if (name == "ES256") return JwsAlg::kEs256;
  return std::nullopt;
}

std::string_view JwsAlgName(JwsAlg alg) {
  switch (alg) {
    case JwsAlg::kRs256:
      return "RS256";
    case JwsAlg::kPs256:
      return "PS256";
    case JwsAlg::kEs256:
      return "ES256";
  }
  return "?";
}

Result<JwsPublicKey> JwsPublicKey::FromRsa(std::string_view n, std::string_view e) {
  n = StripLeadingZeros(n);
  e = StripLeadingZeros(e);
  const size_t bits = BitLength(n);
  if (bits < kMinRsaBits || bits > kMaxRsaBits)
    return Error(ErrorCode::kInvalidParams, "an RSA modulus of " + std::to_string(bits) +
                                                " bits; 2048 to 8192 bits are accepted");
  if (e.empty() || (static_cast<unsigned char>(e.back()) & 1) == 0 ||
      (e.size() == 1 && static_cast<unsigned char>(e.back()) < 3) || e.size() >= n.size())
    return Error(ErrorCode::kInvalidParams,
                 "an RSA public exponent that is not odd, at least 3 and shorter than the modulus");
  BIGNUM* bn_n = BN_bin2bn(Bytes(n), static_cast<int>(n.size()), nullptr);
  BIGNUM* bn_e = BN_bin2bn(Bytes(e), static_cast<int>(e.size()), nullptr);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM* params = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr);
  EVP_PKEY* key = nullptr;
  const bool built = bn_n && bn_e && bld && ctx &&
                     OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
                     OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1 &&
                     (params = OSSL_PARAM_BLD_to_param(bld)) && EVP_PKEY_fromdata_init(ctx) == 1 &&
                     EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) == 1;
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  EVP_PKEY_CTX_free(ctx);
  BN_free(bn_n);
  BN_free(bn_e);
  ERR_clear_error();
  if (!built || !key) {
    EVP_PKEY_free(key);
    return Error(ErrorCode::kInvalidParams, "the RSA key does not load");
  }
  JwsPublicKey out;
  out.type_ = Type::kRsa;
  out.rsa_ = std::shared_ptr<EVP_PKEY>(key, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
  return out;
}

Result<JwsPublicKey> JwsPublicKey::FromEcP256(std::string_view x, std::string_view y) {
  auto ec = Es256PublicKey::FromXY(x, y);
  if (!ec) return std::move(ec).error();
  JwsPublicKey out;
  out.type_ = Type::kEc;
  out.ec_ = std::move(ec).value();
  return out;
}

bool JwsPublicKey::Accepts(JwsAlg alg) const {
  return type_ == Type::kRsa ? (alg == JwsAlg::kRs256 || alg == JwsAlg::kPs256)
                             : alg == JwsAlg::kEs256;
}

bool JwsPublicKey::Verify(JwsAlg alg, std::string_view input, std::string_view signature) const {
  if (!Accepts(alg)) return false;
  if (type_ == Type::kEc) return ec_.Verify(input, signature);
  if (!rsa_) return false;
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  EVP_PKEY_CTX* pctx = nullptr;  // owned by md
  bool ok = md && EVP_DigestVerifyInit(md, &pctx, EVP_sha256(), nullptr, rsa_.get()) == 1;
  if (ok && alg == JwsAlg::kPs256)
    ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) == 1 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 32) == 1;
  else if (ok)
    ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1;
  ok = ok &&
       EVP_DigestVerify(md, Bytes(signature), signature.size(), Bytes(input), input.size()) == 1;
  EVP_MD_CTX_free(md);
  ERR_clear_error();
  return ok;
}

}  // namespace a2ad::core

#include "a2ad/core/es256.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

namespace a2ad::core {

namespace {

constexpr size_t kCoordinate = 32;  // bytes of a P-256 coordinate, and of R and of S

std::shared_ptr<EVP_PKEY> Own(EVP_PKEY* key) {
  return std::shared_ptr<EVP_PKEY>(key, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
}

// OpenSSL's reason for the latest failure, and the queue cleared for the next caller.
std::string OpensslError(std::string_view what) {
  char buf[256] = "unknown error";
  if (unsigned long e = ERR_get_error()) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return std::string(what) + ": " + buf;
}

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// The affine coordinates of the public point of `key` (a private key has it too).
bool PublicXY(EVP_PKEY* key, std::string& x, std::string& y) {
  BIGNUM* bx = nullptr;
  BIGNUM* by = nullptr;
  bool ok = EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, &bx) == 1 &&
            EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, &by) == 1;
  if (ok) {
    x.assign(kCoordinate, '\0');
    y.assign(kCoordinate, '\0');
    ok = BN_bn2binpad(bx, reinterpret_cast<unsigned char*>(x.data()), kCoordinate) ==
             static_cast<int>(kCoordinate) &&
         BN_bn2binpad(by, reinterpret_cast<unsigned char*>(y.data()), kCoordinate) ==
             static_cast<int>(kCoordinate);
  }
  BN_free(bx);
  BN_free(by);
  ERR_clear_error();
  return ok;
}

// "" when `key` is an EC key on P-256, else what it is instead, for a message.
std::string NotP256(EVP_PKEY* key) {
  if (!EVP_PKEY_is_a(key, "EC")) {
    const char* type = EVP_PKEY_get0_type_name(key);
    return std::string("a key of type ") + (type ? type : "unknown");
  }
  char group[80] = {};
  size_t len = 0;
  if (EVP_PKEY_get_group_name(key, group, sizeof group, &len) != 1) {
    ERR_clear_error();
    return "an EC key with explicit curve parameters (not the named curve P-256)";
  }
  int nid = OBJ_sn2nid(group);
  if (nid == NID_undef) nid = EC_curve_nist2nid(group);
  if (nid != NID_X9_62_prime256v1) return std::string("an EC key on ") + group;
  return "";
}

// "-----BEGIN ENCRYPTED PRIVATE KEY-----" (PKCS#8) or "Proc-Type: 4,ENCRYPTED" (SEC1).
bool LooksEncrypted(std::string_view pem) { return pem.find("ENCRYPTED") != pem.npos; }

// Refuses every passphrase request: a server must not prompt on its terminal.
int NoPassphrase(char*, int, int, void*) { return -1; }

}  // namespace

// ---- Es256PublicKey -----------------------------------------------------------------------

Result<Es256PublicKey> Es256PublicKey::FromXY(std::string_view x, std::string_view y) {
  if (x.size() != kCoordinate || y.size() != kCoordinate)
    return Error(ErrorCode::kInvalidParams, "a P-256 coordinate is 32 bytes; got " +
                                                std::to_string(x.size()) + " and " +
                                                std::to_string(y.size()));
  std::string point = "\x04" + std::string(x) + std::string(y);  // SEC1 uncompressed
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM* params = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  EVP_PKEY* key = nullptr;
  const bool built =
      bld && ctx &&
      OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
      OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) ==
          1 &&
      (params = OSSL_PARAM_BLD_to_param(bld)) && EVP_PKEY_fromdata_init(ctx) == 1 &&
      EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) == 1;
  if (!built) {
    EVP_PKEY_free(key);
    key = nullptr;
  }
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  EVP_PKEY_CTX_free(ctx);
  // fromdata decodes the point, which checks that it is on the curve; check the key as a
  // whole too (not the point at infinity, in the right subgroup).
  bool valid = false;
  if (key) {
    EVP_PKEY_CTX* check = EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr);
    valid = check && EVP_PKEY_public_check(check) == 1;
    EVP_PKEY_CTX_free(check);
  }
  ERR_clear_error();
  if (!valid) {
    EVP_PKEY_free(key);
    return Error(ErrorCode::kInvalidParams, "not a point of P-256");
  }
  Es256PublicKey out;
  out.key_ = Own(key);
  out.x_ = std::string(x);
  out.y_ = std::string(y);
  return out;
}

bool Es256PublicKey::Verify(std::string_view input, std::string_view signature) const {
  if (!key_ || signature.size() != 2 * kCoordinate) return false;
  // Raw R||S -> DER ECDSA-Sig-Value, which OpenSSL verifies.
  ECDSA_SIG* sig = ECDSA_SIG_new();
  BIGNUM* r = BN_bin2bn(Bytes(signature), kCoordinate, nullptr);
  BIGNUM* s = BN_bin2bn(Bytes(signature) + kCoordinate, kCoordinate, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig, r, s) != 1) {
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    ERR_clear_error();
    return false;
  }
  unsigned char* der = nullptr;
  const int der_len = i2d_ECDSA_SIG(sig, &der);
  ECDSA_SIG_free(sig);
  if (der_len <= 0) {
    ERR_clear_error();
    return false;
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      ctx && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key_.get()) == 1 &&
      EVP_DigestVerify(ctx, der, static_cast<size_t>(der_len), Bytes(input), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  OPENSSL_free(der);
  ERR_clear_error();
  return ok;
}

// ---- Es256PrivateKey ----------------------------------------------------------------------

Result<Es256PrivateKey> Es256PrivateKey::Generate() {
  EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (!raw) return Error(ErrorCode::kInternal, OpensslError("P-256 key generation"));
  Es256PrivateKey out;
  out.key_ = Own(raw);
  out.public_.key_ = out.key_;
  if (!PublicXY(raw, out.public_.x_, out.public_.y_))
    return Error(ErrorCode::kInternal, "P-256 key generation: no public point");
  return out;
}

Result<Es256PrivateKey> Es256PrivateKey::FromPem(std::string_view pem) {
  if (LooksEncrypted(pem))
    return Error(ErrorCode::kInvalidParams,
                 "the key is encrypted; give an unencrypted PEM private key (keep the file "
                 "0600 instead)");
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* raw = bio ? PEM_read_bio_PrivateKey(bio, nullptr, NoPassphrase, nullptr) : nullptr;
  BIO_free(bio);
  if (!raw)
    return Error(ErrorCode::kInvalidParams,
                 OpensslError("no PEM private key (expected BEGIN PRIVATE KEY or BEGIN EC "
                              "PRIVATE KEY)"));
  Es256PrivateKey out;
  out.key_ = Own(raw);
  if (std::string what = NotP256(raw); !what.empty())
    return Error(ErrorCode::kInvalidParams,
                 "the key is " + what + "; ES256 needs an EC key on P-256 (prime256v1)");
  out.public_.key_ = out.key_;
  if (!PublicXY(raw, out.public_.x_, out.public_.y_))
    return Error(ErrorCode::kInvalidParams, "the P-256 key has no public point");
  return out;
}

std::string Es256PrivateKey::ToPem() const {
  if (!key_) return "";
  BIO* bio = BIO_new(BIO_s_mem());
  std::string pem;
  if (bio && PEM_write_bio_PrivateKey(bio, key_.get(), nullptr, nullptr, 0, nullptr, nullptr)) {
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio, &data);
    if (len > 0) pem.assign(data, static_cast<size_t>(len));
  }
  BIO_free(bio);
  ERR_clear_error();
  return pem;
}

Result<std::string> Es256PrivateKey::Sign(std::string_view input) const {
  if (!key_) return Error(ErrorCode::kInternal, "ES256 sign: an empty key");
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  std::string der;
  bool ok = ctx && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key_.get()) == 1 &&
            EVP_DigestSign(ctx, nullptr, &len, Bytes(input), input.size()) == 1;
  if (ok) {
    der.resize(len);
    ok = EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(der.data()), &len, Bytes(input),
                        input.size()) == 1;
    der.resize(len);
  }
  EVP_MD_CTX_free(ctx);
  if (!ok) return Error(ErrorCode::kInternal, OpensslError("ES256 sign"));
  // DER ECDSA-Sig-Value (two INTEGERs of varying length) -> JWS raw R||S, each left-padded
  // to 32 bytes (RFC 7518 §3.4).
  const unsigned char* p = Bytes(der);
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  if (!sig) return Error(ErrorCode::kInternal, OpensslError("ES256 signature decode"));
  std::string raw(2 * kCoordinate, '\0');
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig, &r, &s);
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  ok = BN_bn2binpad(r, out, kCoordinate) == static_cast<int>(kCoordinate) &&
       BN_bn2binpad(s, out + kCoordinate, kCoordinate) == static_cast<int>(kCoordinate);
  ECDSA_SIG_free(sig);
  if (!ok) return Error(ErrorCode::kInternal, "ES256 signature encode");
  return raw;
}

}  // namespace a2ad::core

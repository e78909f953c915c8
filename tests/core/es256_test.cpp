// ES256 keys: PEM in both forms, the keys that are refused (and what the refusal says),
// signing and verifying with raw R||S signatures.
#include "a2ad/core/es256.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <string>

#include "a2ad/core/encoding.hpp"

namespace a2ad::core {
namespace {

// One fixed P-256 key (made with `openssl genpkey`), as PKCS#8 and as SEC1, and its public
// coordinates as Node's crypto exports them as a JWK.
constexpr const char* kPkcs8 = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvrC3EsLwdkQnra/t
tksigq3a+Xuq7thR2Z0Iw/RoFPahRANCAATivBk8R49Kpqe8G1VExrxcS2C0rpwD
QA0kl8HtEasKKsb9jOqddgog/YPpkGX0FmdrE+3wQWf8IYythxq6wiaE
-----END PRIVATE KEY-----
)";
constexpr const char* kSec1 = R"(-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIL6wtxLC8HZEJ62v7bZLIoKt2vl7qu7YUdmdCMP0aBT2oAoGCCqGSM49
AwEHoUQDQgAE4rwZPEePSqanvBtVRMa8XEtgtK6cA0ANJJfB7RGrCirG/YzqnXYK
IP2D6ZBl9BZnaxPt8EFn/CGMrYcausImhA==
-----END EC PRIVATE KEY-----
)";
constexpr const char* kX = "4rwZPEePSqanvBtVRMa8XEtgtK6cA0ANJJfB7RGrCio";
constexpr const char* kY = "xv2M6p12CiD9g-mQZfQWZ2sT7fBBZ_whjK2HGrrCJoQ";

// PEM of a key OpenSSL makes (`passphrase`: encrypted with it).
std::string PemOf(const char* type, const char* param, const char* passphrase = nullptr) {
  EVP_PKEY* key = param ? EVP_PKEY_Q_keygen(nullptr, nullptr, type, param)
                        : EVP_PKEY_Q_keygen(nullptr, nullptr, type);
  EXPECT_NE(key, nullptr) << type;
  BIO* bio = BIO_new(BIO_s_mem());
  const EVP_CIPHER* cipher = passphrase ? EVP_aes_256_cbc() : nullptr;
  PEM_write_bio_PrivateKey(
      bio, key, cipher, reinterpret_cast<const unsigned char*>(passphrase),
      passphrase ? static_cast<int>(std::char_traits<char>::length(passphrase)) : 0, nullptr,
      nullptr);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return pem;
}

std::string RsaPem() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return pem;
}

TEST(Es256, BothPemFormsReadAsTheSameKey) {
  auto pkcs8 = Es256PrivateKey::FromPem(kPkcs8);
  auto sec1 = Es256PrivateKey::FromPem(kSec1);
  ASSERT_TRUE(pkcs8) << pkcs8.error().message;
  ASSERT_TRUE(sec1) << sec1.error().message;
  EXPECT_EQ(Base64UrlEncode(pkcs8->public_key().x()), kX);
  EXPECT_EQ(Base64UrlEncode(pkcs8->public_key().y()), kY);
  EXPECT_EQ(sec1->public_key().x(), pkcs8->public_key().x());
  EXPECT_EQ(sec1->public_key().y(), pkcs8->public_key().y());
  // Exported as PKCS#8 and read back: the same key.
  const std::string pem = sec1->ToPem();
  EXPECT_NE(pem.find("BEGIN PRIVATE KEY"), std::string::npos) << pem;
  auto again = Es256PrivateKey::FromPem(pem);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->public_key().x(), pkcs8->public_key().x());
}

TEST(Es256, OtherKeysAreRefusedSayingWhatTheyAre) {
  auto expect_refused = [](const std::string& pem, const std::string& says) {
    auto key = Es256PrivateKey::FromPem(pem);
    ASSERT_FALSE(key) << says;
    EXPECT_EQ(key.error().code, ErrorCode::kInvalidParams);
    EXPECT_NE(key.error().message.find(says), std::string::npos) << key.error().message;
  };
  expect_refused(PemOf("EC", "P-384"), "an EC key on secp384r1");
  expect_refused(RsaPem(), "a key of type RSA");
  expect_refused(PemOf("ED25519", nullptr), "a key of type ED25519");
  expect_refused(PemOf("EC", "P-256", "secret"), "encrypted");
  expect_refused("not a key", "no PEM private key");
  expect_refused("", "no PEM private key");
}

TEST(Es256, SignaturesAreRawRAndSAndVerifyOnlyForTheirInputAndKey) {
  auto key = Es256PrivateKey::Generate();
  ASSERT_TRUE(key);
  auto sig = key->Sign("hello");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->size(), 64u);
  EXPECT_TRUE(key->public_key().Verify("hello", *sig));
  EXPECT_FALSE(key->public_key().Verify("hellO", *sig));
  std::string flipped = *sig;
  flipped[40] ^= 1;
  EXPECT_FALSE(key->public_key().Verify("hello", flipped));
  EXPECT_FALSE(key->public_key().Verify("hello", sig->substr(0, 63)));
  EXPECT_FALSE(key->public_key().Verify("hello", ""));
  auto other = Es256PrivateKey::Generate();
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->public_key().Verify("hello", *sig));
  // A random nonce per signature.
  EXPECT_NE(*key->Sign("hello"), *sig);
}

TEST(Es256, APublicKeyFromItsCoordinatesVerifies) {
  auto key = Es256PrivateKey::FromPem(kPkcs8);
  ASSERT_TRUE(key);
  auto pub = Es256PublicKey::FromXY(*Base64UrlDecode(kX), *Base64UrlDecode(kY));
  ASSERT_TRUE(pub) << pub.error().message;
  EXPECT_TRUE(pub->Verify("payload", *key->Sign("payload")));
  // Not on the curve, and wrong sizes.
  std::string y = *Base64UrlDecode(kY);
  y[31] ^= 1;
  EXPECT_FALSE(Es256PublicKey::FromXY(*Base64UrlDecode(kX), y));
  EXPECT_FALSE(Es256PublicKey::FromXY(std::string(31, 'a'), std::string(32, 'b')));
}

TEST(Es256, AnEmptyKeyDoesNothing) {
  Es256PrivateKey empty;
  EXPECT_FALSE(empty.Sign("x"));
  EXPECT_EQ(empty.ToPem(), "");
  EXPECT_FALSE(empty.public_key().Verify("x", std::string(64, '\1')));
}

}  // namespace
}  // namespace a2ad::core

#include "test_pki.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <memory>
#include <stdexcept>

namespace a2ad::testing {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what);
}

struct Free {
  void operator()(X509* x) const { X509_free(x); }
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  void operator()(BIO* b) const { BIO_free(b); }
};
using Cert = std::unique_ptr<X509, Free>;
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Bio = std::unique_ptr<BIO, Free>;

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string PemOf(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  Check(PEM_write_bio_X509(bio.get(), cert) == 1, "write certificate");
  return BioText(bio.get());
}

std::string PemOf(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  Check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "write key");
  return BioText(bio.get());
}

Cert ReadCert(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Cert c(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  Check(c != nullptr, "read certificate");
  return c;
}

Key ReadKey(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Key k(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  Check(k != nullptr, "read key");
  return k;
}

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Check(ext != nullptr, "extension");
  Check(X509_add_ext(cert, ext, -1) == 1, "add extension");
  X509_EXTENSION_free(ext);
}

void AddName(X509_NAME* name, const char* field, const std::string& value) {
  Check(X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                   0) == 1,
        "subject name");
}

// A certificate for a new key, with the subject `o` (may be empty) then `cn`; signed by
// `issuer` with `issuer_key`, or self-signed (a CA) when `issuer` is null.
CertAndKey Make(const std::string& cn, const std::string& o, X509* issuer, EVP_PKEY* issuer_key,
                long serial, const char* usage) {
  Key key(EVP_EC_gen("P-256"));
  Check(key != nullptr, "EC key");
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (!o.empty()) AddName(name, "O", o);
  AddName(name, "CN", cn);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert.get();
  if (!issuer) {
    AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    AddExt(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    AddExt(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    AddExt(cert.get(), signer, NID_ext_key_usage, usage);
    if (std::string(usage) == "serverAuth")
      AddExt(cert.get(), signer, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    AddExt(cert.get(), signer, NID_authority_key_identifier, "keyid");
  }
  Check(X509_sign(cert.get(), issuer_key ? issuer_key : key.get(), EVP_sha256()) > 0, "sign");
  return {PemOf(cert.get()), PemOf(key.get())};
}

}  // namespace

TestPki::TestPki(const std::string& cn) : ca_(Make(cn, "", nullptr, nullptr, 1, "")) {}

CertAndKey TestPki::IssueServer(const std::string& cn) const {
  Cert ca = ReadCert(ca_.cert_pem);
  Key ca_key = ReadKey(ca_.key_pem);
  return Make(cn, "", ca.get(), ca_key.get(), ++serial_, "serverAuth");
}

CertAndKey TestPki::IssueClient(const std::string& cn, const std::string& o) const {
  Cert ca = ReadCert(ca_.cert_pem);
  Key ca_key = ReadKey(ca_.key_pem);
  return Make(cn, o, ca.get(), ca_key.get(), ++serial_, "clientAuth");
}

void WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace a2ad::testing

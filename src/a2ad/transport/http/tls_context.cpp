#include "a2ad/transport/http/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

namespace a2ad::transport {
namespace ssl = boost::asio::ssl;
using core::Error;
using core::ErrorCode;

namespace {

Error Invalid(std::string message) { return Error(ErrorCode::kInvalidParams, std::move(message)); }

core::Result<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Invalid(flag + " '" + path + "': cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty()) return Invalid(flag + " '" + path + "': the file is empty");
  return ss.str();
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

BioPtr MemBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Certificates in `pem`, in order (none when it holds none).
std::vector<X509Ptr> Certificates(const std::string& pem) {
  std::vector<X509Ptr> out;
  BioPtr bio = MemBio(pem);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(x);
  ERR_clear_error();  // the read that ended the loop
  return out;
}

}  // namespace

core::Result<ServerTls> LoadServerTls(const TlsFiles& files) {
  if (files.cert_file.empty() || files.key_file.empty())
    return Invalid("TLS needs both --tls-cert and --tls-key");
  ServerTls out;
  auto cert = ReadFile("--tls-cert", files.cert_file);
  if (!cert) return std::move(cert).error();
  auto key = ReadFile("--tls-key", files.key_file);
  if (!key) return std::move(key).error();
  out.cert_chain_pem = std::move(cert).value();
  out.key_pem = std::move(key).value();
  const auto chain = Certificates(out.cert_chain_pem);
  if (chain.empty())
    return Invalid("--tls-cert '" + files.cert_file + "': no PEM certificate in the file");
  BioPtr key_bio = MemBio(out.key_pem);
  PkeyPtr pkey(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!pkey)
    return Invalid("--tls-key '" + files.key_file +
                   "': no unencrypted PEM private key in the file");
  if (X509_check_private_key(chain.front().get(), pkey.get()) != 1) {
    ERR_clear_error();
    return Invalid("--tls-key '" + files.key_file + "' is not the key of the certificate in '" +
                   files.cert_file + "'");
  }
  if (!files.client_ca_file.empty()) {
    auto ca = ReadFile("--tls-client-ca", files.client_ca_file);
    if (!ca) return std::move(ca).error();
    out.client_ca_pem = std::move(ca).value();
    if (Certificates(out.client_ca_pem).empty())
      return Invalid("--tls-client-ca '" + files.client_ca_file +
                     "': no PEM certificate in the file");
  }
  return out;
}

core::Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const ServerTls& tls) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                   ssl::context::single_dh_use);
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(tls.cert_chain_pem), ec);
  if (!ec) ctx->use_private_key(boost::asio::buffer(tls.key_pem), ssl::context::pem, ec);
  if (ec) return Invalid("the TLS certificate or key is refused: " + ec.message());
  if (!tls.client_ca_pem.empty()) {
    ctx->add_certificate_authority(boost::asio::buffer(tls.client_ca_pem), ec);
    if (ec) return Invalid("--tls-client-ca is refused: " + ec.message());
    // The CA names go into the CertificateRequest, so that a client holding several
    // certificates picks one of this CA.
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    for (const auto& c : Certificates(tls.client_ca_pem))
      sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(c.get())));
    SSL_CTX_set_client_CA_list(native, names);
    // Asked for, verified when sent, not required (tls_context.hpp).
    ctx->set_verify_mode(ssl::verify_peer);
    // Resumed sessions keep the verified client certificate; OpenSSL needs a context id to
    // resume sessions of a context that verifies clients.
    static const unsigned char kSessionContext[] = "a2ad";
    SSL_CTX_set_session_id_context(native, kSessionContext, sizeof kSessionContext - 1);
  }
  return ctx;
}

std::string VerifiedClientSubject(ssl_st* ssl) {
  if (!ssl) return {};
  X509Ptr cert(SSL_get1_peer_certificate(ssl));
  if (!cert || SSL_get_verify_result(ssl) != X509_V_OK) return {};
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert.get()), 0, XN_FLAG_RFC2253) < 0)
    return {};
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

}  // namespace a2ad::transport

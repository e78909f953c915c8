#pragma once
// The server side of TLS (issue 14): the certificate, key and client CA files of `a2ad serve`
// read once at startup (LoadServerTls), and the OpenSSL context the HTTP listener serves
// HTTPS with (MakeServerTlsContext); the gRPC listener gets the same PEM text
// (GrpcBinding::Listen). TLS 1.2 is the oldest version offered.
//
// Mutual TLS: with a client CA, every handshake asks for a client certificate without
// requiring one (a caller may still authenticate with an API key, and the exempt routes stay
// readable): a certificate that is presented must chain to that CA or the handshake fails; a
// verified one is named by its subject (VerifiedClientSubject), which the Authenticator maps
// to a principal (client_cert_auth.hpp).
//
// Errors never contain the PEM text (a private key must not reach a log).
// Thread safety: the functions are pure; the context is used read-only by every connection.
#include <memory>
#include <string>

#include "a2ad/core/result.hpp"

struct ssl_st;

namespace boost::asio::ssl {
class context;
}

namespace a2ad::transport {

/// What `--tls-cert`, `--tls-key` and `--tls-client-ca` name.
struct TlsFiles {
  std::string cert_file;       // PEM: the server certificate, then its chain
  std::string key_file;        // PEM: its private key (unencrypted)
  std::string client_ca_file;  // PEM: CAs client certificates must chain to; "" = no mTLS
};

/// The PEM text of those files, checked: the certificate and key parse and belong together,
/// the client CA file holds at least one certificate.
struct ServerTls {
  std::string cert_chain_pem;
  std::string key_pem;
  std::string client_ca_pem;  // "" = no mutual TLS
};

/// Reads and checks `files`. kInvalidParams naming the flag and file that cannot be read or
/// does not hold what it should (the caller exits 2).
core::Result<ServerTls> LoadServerTls(const TlsFiles& files);

/// A TLS server context for `tls`: TLS 1.2 and 1.3, the certificate and key, and with a
/// client CA the optional client certificate request described above. kInvalidParams when
/// OpenSSL refuses the material.
core::Result<std::shared_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const ServerTls& tls);

/// The subject of the client certificate `ssl` verified in its handshake, as RFC 2253 text
/// ("CN=billing-agent,O=Acme": most specific first, the form gRPC's x509_subject uses too);
/// "" when the client sent none or it was not verified.
std::string VerifiedClientSubject(ssl_st* ssl);

}  // namespace a2ad::transport

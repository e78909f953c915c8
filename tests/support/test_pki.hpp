#pragma once
// Certificates made by the tests themselves with the OpenSSL library (issue 14): a CA, server
// certificates for 127.0.0.1 / localhost and client certificates it issues, as PEM text.
// EC P-256 keys, SHA-256 signatures, valid from an hour ago for a day.
#include <filesystem>
#include <string>

namespace a2ad::testing {

struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

class TestPki {
 public:
  /// A new self-signed CA whose subject is CN=<cn>. Throws std::runtime_error on an OpenSSL
  /// failure.
  explicit TestPki(const std::string& cn);

  const std::string& ca_pem() const { return ca_.cert_pem; }
  /// A server certificate (serverAuth) for DNS:localhost and IP:127.0.0.1, subject CN=<cn>.
  CertAndKey IssueServer(const std::string& cn = "localhost") const;
  /// A client certificate (clientAuth) whose subject is O=<o>, CN=<cn> (RFC 2253 text:
  /// "CN=<cn>,O=<o>").
  CertAndKey IssueClient(const std::string& cn, const std::string& o) const;

 private:
  CertAndKey ca_;
  mutable long serial_ = 1;  // the next certificate's serial number
};

/// Writes `text` to `path` (replacing it); throws std::runtime_error when it cannot.
void WriteTextFile(const std::filesystem::path& path, const std::string& text);

}  // namespace a2ad::testing

#pragma once
// Mutual TLS (issue 14): the principal of a verified client certificate. The server verifies
// the certificate in the TLS handshake (tls_context.hpp) and hands its subject on
// (HttpRequest::client_cert_subject); this map says who that subject is. It is the file of
// `--tls-client-map`, a JSON array of entries:
//
//   [{"subject": "CN=billing-agent,O=Acme", "tenant": "acme",
//     "scopes": ["tasks:read", "tasks:write"]}]
//
// `subject` is the certificate's subject as RFC 2253 text (most specific attribute first, as
// `openssl x509 -noout -subject -nameopt RFC2253` prints it), compared byte for byte;
// `tenant` (1..128 characters) and `scopes` as for an API key (`admin` grants every scope).
// A certificate so mapped is the principal `cert:<subject>` of that tenant with those scopes;
// a verified certificate the map does not name is refused with kPermissionDenied (403: the
// client proved who it is, and that identity may do nothing here).
//
// Thread safety: immutable once loaded; PrincipalOf may be called from any thread.
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"

namespace a2ad::transport {

class ClientCertMap {
 public:
  /// The map in `json` (the format above). kInvalidParams naming `what` and the entry at
  /// fault: not an array, a member missing, empty or of the wrong type, an unknown member, a
  /// subject named twice.
  static core::Result<ClientCertMap> Parse(std::string_view json, std::string_view what);
  /// Parse of the file at `path`; kInvalidParams also when it cannot be read.
  static core::Result<ClientCertMap> Load(const std::string& path);

  /// The principal of a verified certificate with this subject; kPermissionDenied when no
  /// entry names it (the message names the subject: it is no secret).
  core::Result<protocol::Principal> PrincipalOf(std::string_view subject) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string tenant;
    std::vector<std::string> scopes;
  };
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace a2ad::transport

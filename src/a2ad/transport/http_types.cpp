#include "a2ad/transport/http_types.hpp"

#include <openssl/sha.h>
#include <strings.h>

#include "a2ad/core/encoding.hpp"

namespace a2ad::transport {

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  return {};
}

std::string_view HttpRequest::Path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), d);
  return core::HexEncode(std::string_view(reinterpret_cast<const char*>(d), sizeof d));
}

std::string WeakEtag(std::string_view body) {
  return "W/\"" + Sha256Hex(body).substr(0, 16) + "\"";
}

}  // namespace a2ad::transport

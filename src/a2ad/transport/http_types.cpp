#include "a2ad/transport/http_types.hpp"

#include <strings.h>

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

}  // namespace a2ad::transport

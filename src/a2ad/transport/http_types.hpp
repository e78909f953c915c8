#pragma once
// Transport-neutral request/response values, so handlers need no Beast headers.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace a2ad::transport {

struct HttpRequest {
  std::string method;   // "GET", "POST", ...
  std::string target;   // path + query, as received
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  /// Case-insensitive header lookup; "" if absent.
  std::string_view Header(std::string_view name) const;
  /// The path part of target (before '?').
  std::string_view Path() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

/// A JSON response with `status`.
HttpResponse JsonResponse(int status, std::string body);

}  // namespace a2ad::transport

#include "a2ad/transport/console/console_routes.hpp"

#include <cstdlib>
#include <string>

#include "a2ad/transport/console/console_assets.hpp"
#include "a2ad/transport/error_body.hpp"

namespace a2ad::transport {

namespace {

const ConsoleAsset* Find(std::string_view path) {
  for (const auto& a : ConsoleAssets())
    if (a.path == path) return &a;
  return nullptr;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  // "gzip", "br, gzip;q=0.8"; "gzip;q=0" refuses it.
  const size_t at = accept_encoding.find("gzip");
  if (at == std::string_view::npos) return false;
  std::string_view params = accept_encoding.substr(at + 4);
  params = params.substr(0, params.find(','));
  const size_t q = params.find("q=");
  if (q == std::string_view::npos) return true;
  return std::strtod(std::string(params.substr(q + 2)).c_str(), nullptr) > 0;
}

void Secure(HttpResponse& r) {
  r.headers.emplace_back("Content-Security-Policy", kConsoleCsp);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
}

HttpResponse Answer(const HttpRequest& request, std::string_view path) {
  if (request.method != "GET" && request.method != "HEAD") {
    return MethodNotAllowed("GET, HEAD", "the console is read with GET");
  }
  if (ConsoleAssets().empty())
    return RestErrorResponse(404, "not_found", "this a2ad was built without the console");
  if (path == "/console") {
    HttpResponse r;
    r.status = 308;
    r.content_type.clear();
    r.headers.emplace_back("Location", "/console/");
    return r;
  }
  const ConsoleAsset* asset = Find(path);
  // A file the build does not have (an old hashed name) is missing; a page path is the page.
  if (!asset && path.starts_with("/console/assets/"))
    return RestErrorResponse(404, "not_found", "no console asset " + std::string(path));
  if (!asset) asset = Find("/console/index.html");
  if (!asset) return RestErrorResponse(404, "not_found", "the console's build has no page");
  HttpResponse r;
  r.content_type = std::string(asset->content_type);
  const bool gzip = AcceptsGzip(request.Header("Accept-Encoding"));
  r.body = std::string(gzip ? asset->gzip : asset->body);
  if (gzip) r.headers.emplace_back("Content-Encoding", "gzip");
  r.headers.emplace_back("Vary", "Accept-Encoding");
  r.headers.emplace_back("Cache-Control", asset->immutable ? "public, max-age=31536000, immutable"
                                                           : "no-cache");
  Secure(r);
  return r;
}

}  // namespace

std::optional<HttpResponse> ServeConsole(const HttpRequest& request) {
  const std::string_view path = request.Path();
  if (path != "/console" && !path.starts_with("/console/")) return std::nullopt;
  HttpResponse r = Answer(request, path);
  // One label for every path under /console/ (any path is the page: a label per path would
  // let a client grow the metrics without bound).
  r.log_operation = "console";
  return r;
}

}  // namespace a2ad::transport

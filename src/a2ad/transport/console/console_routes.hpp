#pragma once
// GET /console/...: the operator console (console_assets.hpp), a single-page application.
// Public like the agent card: the files hold no data, and every call the page makes goes
// through the API with the credential the operator signs in with (kept in the tab). An
// asset's path answers that asset; any other path under /console/ answers the page (it
// routes in the browser: /console/tasks/{id} reloads to the same task); /console redirects
// to /console/. Every answer carries a strict Content-Security-Policy (only this origin's
// scripts, styles and connections; no inline script, no frame), nosniff and no referrer;
// hashed assets are cached for a year, the page not at all; gzip when the client accepts it.
#include <optional>

#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

inline constexpr const char* kConsoleCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

/// The answer of `request` when its path is /console or under /console/; nullopt otherwise.
std::optional<HttpResponse> ServeConsole(const HttpRequest& request);

}  // namespace a2ad::transport

// `a2ad push listen` (issue 5, client side): receive pushes, verify each one, print it.
// Verification: the Bearer JWT (from Authorization, or X-A2A-Push-JWT when the config asked
// for other credentials there) against the server's JWKS (fetched at start and again when a
// token names an unknown kid, i.e. after a key rotation), iss/aud, iat/exp and the jti
// (a token seen before is a replay: refused); the X-A2A-Notification-Token when --token is
// given (constant-time compare). Accepted: 200 and one JSON line on stdout. Refused: 401
// and one line on stderr saying why.
// The JWKS is fetched through the egress guard and client (net/) like every outbound call,
// with a policy of its own: this is a local development tool pointed at one a2ad server, so
// its allow-list holds exactly the host --jwks-url names (a loopback or private address
// included), plain http is allowed, and redirects are not followed. Any other host is refused.
#include <openssl/crypto.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json.hpp>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/push_listen/push_listen.hpp"
#include "a2ad/transport/http/http_server.hpp"
#include "a2ad/transport/http/listen_address.hpp"

namespace a2ad::push_listen {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Blocking GETs of the JWKS URL through the egress client, with a guard that admits exactly
// that URL's host (see the top of this file).
class JwksFetcher {
 public:
  static core::Result<std::unique_ptr<JwksFetcher>> Create(const std::string& url) {
    net::EgressPolicy lenient;
    lenient.allow_http = true;
    auto parsed = net::ParseUrl(url, lenient);
    if (!parsed)
      return core::Error(core::ErrorCode::kInvalidParams, "--jwks-url: " + parsed.error().message);
    auto f = std::unique_ptr<JwksFetcher>(new JwksFetcher(url));
    net::EgressPolicy policy;
    policy.allow_http = true;
    policy.allow_list = {parsed->host};
    policy.redirects = net::RedirectPolicy::Never();
    auto guard = net::UrlGuard::Create(policy, f->resolver_);
    if (!guard)
      return core::Error(core::ErrorCode::kInvalidParams, "--jwks-url: " + guard.error().message);
    f->guard_ = std::make_unique<net::UrlGuard>(std::move(guard).value());
    net::HttpClientOptions options;
    options.total_timeout = std::chrono::seconds(10);
    options.user_agent = "a2ad-push-listen";
    auto client = net::HttpClient::Create(*f->guard_, options);
    if (!client) return std::move(client).error();
    f->client_ = std::move(client).value();
    return f;
  }

  core::Result<std::string> Fetch() const {
    net::HttpRequest req;
    req.url = url_;
    req.headers.emplace_back("Accept", "application/json");
    asio::io_context io;  // its own: called from the receiver's handler, which waits
    core::Result<net::HttpResponse> got;
    asio::co_spawn(io, client_->Fetch(std::move(req)),
                   [&](const std::exception_ptr& ep, core::Result<net::HttpResponse> r) {
                     if (ep) std::rethrow_exception(ep);
                     got = std::move(r);
                   });
    io.run();
    if (!got)
      return core::Error(core::ErrorCode::kUnavailable, "GET " + url_ + ": " + got.error().message);
    if (got->status != 200)
      return core::Error(core::ErrorCode::kUnavailable,
                         "GET " + url_ + ": HTTP " + std::to_string(got->status));
    return std::move(got).value().body;
  }

 private:
  explicit JwksFetcher(std::string url) : url_(std::move(url)) {}
  std::string url_;
  net::SystemResolver resolver_;
  std::unique_ptr<net::UrlGuard> guard_;
  std::unique_ptr<net::HttpClient> client_;
};

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

transport::HttpResponse Refuse(std::string why) {
  std::fprintf(stderr, "push listen: rejected: %s\n", why.c_str());
  std::fflush(stderr);
  json::object o{{"error", json::object{{"code", "unauthorized"}, {"message", why}}}};
  auto r = transport::JsonResponse(401, protocol::SerializeJson(o));
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

// Outside the handler coroutine (GCC 12 and braced initializers in coroutines).
std::string AcceptedLine(std::string_view event_id, const json::object& claims, json::value body) {
  json::object line;
  line["eventId"] = event_id;
  if (const json::value* t = claims.if_contains("taskId")) line["taskId"] = *t;
  line["jti"] = claims.at("jti");
  line["body"] = std::move(body);
  return protocol::SerializeJson(line);
}

}  // namespace

int Run(const Config& config) {
  auto listen = transport::ParseListen(config.listen);
  if (!listen) {
    core::LogError(listen.error().message);
    return 2;
  }
  if (config.jwks_url.empty()) {
    core::LogError("--jwks-url is required (e.g. http://127.0.0.1:8080/.well-known/jwks.json)");
    return 2;
  }
  core::SystemClock clock;
  asio::io_context io(1);
  std::mutex mu;  // the verifier and the JWKS refetch
  std::string audience = config.audience;
  push::VerifyOptions vopts;
  vopts.issuer = config.issuer;
  vopts.max_age_ms = config.max_age_s * 1000;
  std::unique_ptr<push::JwtVerifier> verifier;
  auto jwks = JwksFetcher::Create(config.jwks_url);
  if (!jwks) {
    core::LogError(jwks.error().message);
    return 2;
  }
  auto load_jwks = [&]() -> core::Result<void> {
    auto body = (*jwks)->Fetch();
    if (!body) return std::move(body).error();
    return verifier->SetJwks(*body);
  };

  auto handler = [&](transport::HttpRequest req) -> asio::awaitable<transport::HttpResponse> {
    if (req.method != "POST") co_return Refuse("only POST is accepted");
    std::string jwt;
    std::string_view auth = req.Header("Authorization");
    std::string_view alt = req.Header("X-A2A-Push-JWT");
    if (!alt.empty())
      jwt = std::string(alt);
    else if (auth.size() > 7 && (auth.substr(0, 7) == "Bearer " || auth.substr(0, 7) == "bearer "))
      jwt = std::string(auth.substr(7));
    if (jwt.empty()) co_return Refuse("no Bearer JWT");
    if (!config.token.empty() &&
        !ConstantTimeEqual(req.Header("X-A2A-Notification-Token"), config.token))
      co_return Refuse("X-A2A-Notification-Token does not match");
    core::Result<json::object> claims = core::Error(core::ErrorCode::kInternal, "unverified");
    {
      std::lock_guard lock(mu);
      std::string kid = push::JwtKid(jwt);
      if (!kid.empty() && !verifier->HasKey(kid)) {
        if (auto reloaded = load_jwks(); !reloaded)
          co_return Refuse("cannot refresh the JWKS: " + reloaded.error().message);
      }
      claims = verifier->Verify(jwt);
    }
    if (!claims) co_return Refuse(claims.error().message);
    auto body = protocol::ParseJson(req.body);
    if (!body) co_return Refuse("body is not JSON: " + body.error().message);
    std::string line = AcceptedLine(req.Header("X-A2A-Event-Id"), *claims, std::move(body).value());
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    co_return transport::JsonResponse(200, "{}");
  };

  transport::HttpServer server(io, handler, transport::HttpServerOptions{});
  auto port = server.Listen(listen->host, listen->port);
  if (!port) {
    core::LogError(port.error().message);
    return 1;
  }
  std::string host =
      listen->host.find(':') != std::string::npos ? "[" + listen->host + "]" : listen->host;
  const std::string url = "http://" + host + ":" + std::to_string(port.value()) + "/";
  if (audience.empty()) audience = url;
  vopts.audience = audience;
  verifier = std::make_unique<push::JwtVerifier>(vopts, clock);
  // The server may still be starting (a script starts both): the first fetch is tried a
  // few times, 0.25 s, 0.5 s, 1 s, 2 s apart, before giving up with the last error.
  for (int attempt = 1;; ++attempt) {
    auto loaded = load_jwks();
    if (loaded) break;
    if (attempt == 5) {
      core::LogError("cannot load the JWKS after " + std::to_string(attempt) +
                     " attempts: " + loaded.error().message);
      return 1;
    }
    std::fprintf(stderr, "%s push listen: %s; retrying\n", config.program.c_str(),
                 loaded.error().message.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(250 << (attempt - 1)));
  }
  server.Start();
  std::printf("%s push listen: receiving on %s\n", config.program.c_str(), url.c_str());
  std::fflush(stdout);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code, int) {
    server.Stop();
    io.stop();
  });
  io.run();
  return 0;
}

}  // namespace a2ad::push_listen

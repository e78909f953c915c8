#pragma once
// Routes HTTP requests. Every request passes the middleware (middleware.hpp: the version
// query, access log, metrics, tracing, CORS), then the one route index (AddRoutes in
// router.cpp, in order): the routes served before authentication (the agent card, /healthz,
// /readyz, /metrics, the console, self-authenticating routes), those exempt from it (OpenWOP
// discovery, the JWKS), then, once the caller is admitted (auth/auth.hpp), the A2A JSON-RPC
// endpoint, the A2A HTTP+JSON bindings (a2a/rest/a2a_rest.hpp: 1.0 under /a2a/rest, 0.3 under
// /a2a/rest03), the OpenWOP test seams, push routes and the OpenWOP REST surface.
//
// Thread safety: configure (SetCards, PublishKey, EnablePush) before serving; Handle may then
// run concurrently on any I/O thread.
#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "a2ad/transport/a2a/rest/a2a_rest.hpp"
#include "a2ad/transport/middleware.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/http/cors.hpp"
#include "a2ad/transport/http/http_types.hpp"
#include "a2ad/transport/a2a/jsonrpc/jsonrpc_handler.hpp"
#include "a2ad/transport/openwop/openwop_api.hpp"
#include "a2ad/transport/openwop/push_routes.hpp"
#include "a2ad/transport/openwop/sample_seams.hpp"

namespace a2ad::push {
class KeyStore;
}

namespace a2ad::transport {

/// A transport error in the JSON-RPC shape: {"jsonrpc":"2.0","id":null,"error":{"code":
/// -32600,"message":<message>,"data":{"httpStatus":"<status>"}}} (id null: the request was
/// never parsed), with HTTP status `status`.
HttpResponse JsonRpcTransportError(int status, std::string_view message);

/// The HttpServerOptions::transport_error of a2ad's surfaces: the JSON-RPC shape on
/// `jsonrpc_path` (and on it with a trailing '/'), each A2A REST binding's own shape under its
/// base path (A2aRestTransportError), OpenWOP's error envelope on every other path and when
/// the path is not known. Pure; safe to call from any thread.
TransportErrorFn SurfaceTransportErrors(std::string jsonrpc_path);

/// One entry of the route index.
struct Route {
  enum class Access {
    kPublic,         // served before authentication: public, or checks its own credential
    kOpen,           // exempt from authentication (`scoped`: unless a credential is presented)
    kAuthenticated,  // served once the caller is admitted
  };
  using Matcher = std::function<bool(const HttpRequest&)>;
  /// The answer of a route that owns every request it matches.
  using Answer = std::function<boost::asio::awaitable<HttpResponse>(HttpRequest&)>;
  /// The answer of a family that knows its paths only by trying: nullopt is "not mine", and
  /// the next route is tried.
  using Offer =
      std::function<boost::asio::awaitable<std::optional<HttpResponse>>(HttpRequest&)>;
  std::string name;
  Access access = Access::kAuthenticated;
  Matcher matches;
  Answer answer;  // exactly one of answer | offer
  Offer offer;
  bool scoped = false;
};

class Router {
 public:
  /// `agent_card` is served as-is with an ETag derived from its bytes.
  Router(tasks::TaskService& service, const boost::json::object& agent_card,
         StreamOptions stream_options = {}, std::string jsonrpc_path = "/v1/a2a",
         OpenwopApi* openwop = nullptr, const ExtensionRegistry* extensions = nullptr);
  /// Answers `request`, and logs it (one info line: method, route, status, ms, operation,
  /// task, error, principal, traceId, stream).
  boost::asio::awaitable<HttpResponse> Handle(HttpRequest request);
  /// The card in both shapes (agent_card.hpp CardForm).
  struct CardForms {
    boost::json::object v03, v10;
  };
  /// Replaces the card: its 1.0 form is served to requests with `A2A-Version: 1.x`, or to
  /// every request when `only` (the server serves 1.0 only), its 0.3 form to the others.
  /// `open` are the forms that declare no security, served while `secured_now` says
  /// authentication is off (development mode); `secured` those that declare it. Without a
  /// call every request gets the card given to the constructor. Call before serving. The weak
  /// ETag of a signed card (card_signature.hpp) is computed without the `signature` values: a
  /// new signature of the same content by the same key (ECDSA signs with a random nonce, so
  /// each start, and each replica, has its own) is semantically the same card, and a client's
  /// cached copy stays valid.
  void SetCards(const CardForms& open, const CardForms& secured, bool only,
                std::function<bool()> secured_now);
  /// The authenticated extended card (agent_card.hpp CardAudience::kExtended) in both forms,
  /// answered by GetExtendedAgentCard on every binding. May be called while serving.
  void SetExtendedCards(const boost::json::object& card, const boost::json::object& v10_card);
  /// Lists `jwk` (a public key, protocol/jws.hpp PublicJwk) in the JWKS served at
  /// GET /.well-known/jwks.json, before the push keys (EnablePush). The route answers 404
  /// while the server has no key at all. Call before serving.
  void PublishKey(boost::json::object jwk);
  /// Authenticates every request but the agent cards, the JWKS, discovery
  /// (/.well-known/openwop, /v1/openapi.json) and /healthz with `auth` (auth.hpp; it must
  /// outlive the router): a failure is answered 401 with `WWW-Authenticate: Bearer` in the
  /// shape of the path's surface (JSON-RPC error object with id null; google.rpc.Status on
  /// the 1.0 REST binding; the 0.3 REST error; OpenWOP's envelope elsewhere). Without it
  /// every request is the anonymous development caller. Call before serving.
  void SetAuthenticator(Authenticator* auth) { auth_ = auth; }
  /// GET /readyz (no credential, like /healthz): `probe` answers whether the server can do
  /// its work and why ({"ready": bool, "checks": {...}}); 200 when ready, else 503. Without a
  /// probe, /readyz answers as /healthz does. Call before serving.
  using ReadinessProbe =
      std::function<boost::asio::awaitable<std::pair<bool, boost::json::object>>()>;
  void SetReadiness(ReadinessProbe probe) { readiness_ = std::move(probe); }
  /// GET /metrics: `source` answers the Prometheus text exposition (app/metrics_setup.hpp),
  /// authenticated like the API when the server has keys. Declares the request families
  /// (present from the first scrape, before any request). Call before serving.
  void SetMetrics(std::function<boost::asio::awaitable<std::string>()> source);
  /// CORS for browser pages of the policy's origins (http/cors.hpp): a middleware, after
  /// the others. Call before serving.
  void SetCors(CorsPolicy cors) { Use(MakeCors(std::move(cors))); }
  /// Adds a middleware (middleware.hpp) after those there are. Call before serving.
  void Use(std::unique_ptr<Middleware> m) { middleware_.push_back(std::move(m)); }
  /// Adds a route to the index, after those of its access level there are (a public one is
  /// tried before every exempt and authenticated one). Call before serving.
  void AddRoute(Route route) { routes_.push_back(std::move(route)); }
  /// GET /console/...: the operator console (console_routes.hpp); off until called.
  void EnableConsole() { console_ = true; }
  /// The A2A operation table the bindings serve (for the gRPC binding).
  const OperationTable& operations() const { return jsonrpc_.operations(); }
  /// See JsonRpcHandler::DisableStreaming. Call before serving.
  void DisableStreaming() { jsonrpc_.DisableStreaming(); }
  /// Push notifications: the push-config operations (unless `a2a_push` is false:
  /// --no-push-notifications, they then answer PushNotificationNotSupported) and
  /// push_routes.hpp (webhooks, deliveries). Call before serving.
  void EnablePush(push::PushService& service, push::KeyStore& keys, storage::PushStore& store,
                  bool a2a_push = true);
  /// The OpenWOP test seams (--conformance-fixtures): sample_seams.hpp's routes, and the
  /// push-config seam of push_routes.hpp. Without this call they are unknown paths (404).
  /// Call before serving, after EnablePush.
  void EnableSampleSeams(std::unique_ptr<SampleSeams> seams);
  /// Serves `path` with `receive`, before and without authentication: the route checks its
  /// own credential (a peer's pushes to a2ad carry the token a2ad gave the peer,
  /// app/peer_push.hpp). Call before serving.
  void AddSelfAuthenticatingRoute(const std::string& path,
                                  std::function<HttpResponse(const HttpRequest&)> receive);

 private:
  void AddRoutes();
  boost::asio::awaitable<HttpResponse> Dispatch(HttpRequest request, std::string& principal);
  static boost::asio::awaitable<std::optional<HttpResponse>> Serve(const Route& route,
                                                                   HttpRequest& request);
  bool IsJsonRpcPath(std::string_view path) const;
  boost::asio::awaitable<HttpResponse> Ready();
  boost::asio::awaitable<HttpResponse> Scrape(HttpRequest& request);

  std::vector<std::unique_ptr<Middleware>> middleware_;
  std::vector<Route> routes_;
  struct CardBody {
    std::string body;
    std::string etag;
  };
  HttpResponse Card(const HttpRequest& request) const;
  HttpResponse Jwks() const;
  /// The error answer to `e` (a refused credential) in the shape of `request`'s surface.
  HttpResponse Refused(const HttpRequest& request, const core::Error& e) const;

  tasks::TaskService& service_;
  std::function<boost::asio::awaitable<std::string>()> metrics_;
  ReadinessProbe readiness_;
  Authenticator* auth_ = nullptr;
  JsonRpcHandler jsonrpc_;
  A2aRestBinding rest_;    // A2A 1.0, over jsonrpc_'s operation table
  A2aRestBinding rest03_;  // A2A 0.3, over the same table
  OpenwopApi* openwop_;
  std::string jsonrpc_path_;
  CardBody card_;  // the constructor's: served until SetCards
  struct CardBodies {
    CardBody v03, v10;
  };
  std::optional<CardBodies> open_cards_, secured_cards_;
  std::function<bool()> secured_now_;
  std::shared_ptr<ExtendedCard> extended_card_ = std::make_shared<ExtendedCard>();
  bool v10_only_ = false;
  bool console_ = false;
  std::string last_modified_;  // when the cards were made (they do not change while serving)
  std::unique_ptr<PushRoutes> push_routes_;
  std::unique_ptr<SampleSeams> sample_seams_;
  boost::json::array published_keys_;    // PublishKey
  push::KeyStore* push_keys_ = nullptr;  // EnablePush; locks internally
};

}  // namespace a2ad::transport

#pragma once
// The driver of the REST golden fixtures (fixtures/rest_v10.json, fixtures/rest_v03.json; STYLE.md
// #7): a fixture is a sequence of HTTP exchanges, each run against one of a few servers of the
// binding (a case's "server" names it; "default" when absent), created on first use and kept
// for the later cases naming it. Every server has an in-memory store, a manual clock and
// sequential ids, so every byte of every answer is predictable. A case is
//   {"name": "...", "server": "...", "method": "GET", "target": "/a2a/rest/...",
//    "headers": {...}, "body": <JSON> | "raw": "<text>" | "rawHttp": "<request bytes>",
//    "expect": {"status": 200, "contentType": "...", "headers": {...}, "body": <JSON> |
//               "text": "<not JSON>" | "sse": ["id: 0\ndata: {...}", ...]}}
// Servers (conformance.hpp ServerOptionsNamed):
//   default            the operation table with push configs served, the geo extension
//                      registered (optional), the echo, gate and tck skills;
//   withoutPush        AddPushOperations not called: the push-config routes are refused;
//   oneZeroOnly        `--a2a-versions 1.0`: the 0.3 binding refuses every route;
//   requiresExtension  the extension https://example.com/ext/required/v1 is required;
//   stopping           the task service no longer accepts work (shutting down);
//   authenticated      API keys are required (transport/auth/auth.hpp, as the router admits a
//                      request): kGoldenReaderKey, tasks:read only;
//   http               the default server behind a real HttpServer on 127.0.0.1 (port 0)
//                      with a 256-byte body limit and a2ad's transport error shapes
//                      (router.hpp SurfaceTransportErrors): for the errors the HTTP server
//                      answers itself. Its answers record status, Content-Type and body.
// RunRestGolden compares each answer with "expect"; with A2AD_UPDATE_GOLDEN=1 it rewrites the
// "expect" members from the current output instead (then read the diff before committing).
//
// Thread safety: one test thread (the http server's I/O runs on a thread of its own).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "a2ad/core/api_key.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/builtin/tck_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/rest/a2a_rest.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/http/http_server.hpp"
#include "a2ad/transport/router.hpp"
#include "conformance.hpp"
#include "http_client.hpp"
#include "wait_for.hpp"

namespace a2ad::testing {

/// One REST binding of `version` over a fresh task service.
struct RestFixture {
  core::ManualClock clock{1767261600000};  // 2026-01-01T10:00:00.000Z
  std::unique_ptr<core::IdGenerator> ids = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store;
  boost::asio::io_context io;
  // Push: only example.com resolves (to a public address); nothing is ever sent.
  net::StaticResolver resolver{{{"example.com", {"93.184.216.34"}}}};
  net::UrlGuard guard = net::UrlGuard::Create({}, resolver).value();
  push::PushService push{store, store, guard, clock, *ids};
  tasks::TaskService service{store, clock, *ids, io.get_executor(), ServiceOptions(push)};
  transport::ExtensionRegistry extensions;
  transport::OperationTable ops;
  std::unique_ptr<transport::A2aRestBinding> rest;
  storage::MemoryApiKeyStore keys;
  std::unique_ptr<transport::Authenticator> auth;  // the "authenticated" server's
  protocol::WireVersion version = protocol::WireVersion::kV10;

  static tasks::TaskServiceOptions ServiceOptions(push::PushService& p) {
    tasks::TaskServiceOptions o;
    o.vet_push_config = [&p](protocol::PushNotificationConfig& c, const std::string& task_id) {
      return p.Vet(c, task_id);
    };
    o.on_commit = [&p](const storage::TaskRecord* previous, storage::TaskCommit& commit) {
      p.OnCommit(previous, commit);
    };
    return o;
  }

  explicit RestFixture(protocol::WireVersion v, ServerOptions options = {}) : version(v) {
    if (options.authenticated) {
      storage::ApiKeyRecord key;
      key.key_id = kGoldenReaderKeyId;
      key.secret_sha256 = core::HashApiKeySecret(kGoldenReaderSecret);
      key.tenant = "default";
      key.scopes = {"tasks:read"};
      EXPECT_TRUE(keys.Insert(key));
      auth = std::make_unique<transport::Authenticator>(keys, clock);
    }
    service.RegisterSkill({"echo", "Echo", "echoes", {"echo"}, {}},
                          std::make_shared<tasks::EchoExecutor>());
    service.RegisterSkill({"gate", "Gate", "asks one question", {"test"}, {}},
                          std::make_shared<GateExecutor>());
    service.RegisterSkill({"tck", "TCK", "the conformance kit's agent", {"test"}, {}},
                          std::make_shared<tasks::TckExecutor>());
    transport::Extension geo;
    geo.uri = kGeoExtension;
    extensions.Register(std::move(geo));
    if (options.require_extension) {
      transport::Extension required;
      required.uri = kRequiredExtension;
      required.required = true;
      extensions.Register(std::move(required));
    }
    ops = transport::CoreA2aOperations(service, 16);
    if (options.serve_push) transport::AddPushOperations(ops, push, service);
    if (options.stopping) service.StopAccepting();
    transport::StreamOptions stream;
    stream.serve_v03 = options.serve_v03;
    rest = std::make_unique<transport::A2aRestBinding>(ops,
                                                       version == protocol::WireVersion::kV03
                                                           ? transport::kA2aRest03Path
                                                           : transport::kA2aRestPath,
                                                       stream, &extensions, version);
    EXPECT_TRUE(push.WarmCache());
  }

  transport::HttpResponse Call(transport::HttpRequest req) {
    EXPECT_TRUE(rest->Owns(req.Path())) << req.target;
    transport::HttpResponse out;
    if (auth) {  // what the router does before it dispatches to the binding
      std::optional<transport::HttpResponse> refused;
      boost::asio::co_spawn(io,
                            transport::Admit(*auth, req,
                                             [this](const core::Error& e) {
                                               return version == protocol::WireVersion::kV03
                                                          ? transport::A2aRest03ErrorResponse(e)
                                                          : transport::A2aRestErrorResponse(e);
                                             }),
                            [&](std::exception_ptr ep, std::optional<transport::HttpResponse> r) {
                              if (ep) std::rethrow_exception(ep);
                              refused = std::move(r);
                            });
      io.restart();
      io.run();
      if (refused) {
        clock.Advance(1000);
        return std::move(*refused);
      }
    }
    boost::asio::co_spawn(io, rest->Handle(req),
                          [&](std::exception_ptr ep, transport::HttpResponse r) {
                            if (ep) std::rethrow_exception(ep);
                            out = std::move(r);
                          });
    io.restart();
    io.run();
    clock.Advance(1000);  // each exchange one second later: timestamps tell them apart
    return out;
  }

  /// Runs a streaming response to its end; returns the SSE events (without the blank lines).
  boost::json::array Drain(transport::HttpResponse& res) {
    CollectingSink sink;
    bool done = false;
    boost::asio::co_spawn(io, res.stream(sink), [&](std::exception_ptr ep) {
      if (ep) std::rethrow_exception(ep);
      done = true;
    });
    io.restart();
    io.run();
    EXPECT_TRUE(done) << "the stream did not end";
    boost::json::array events;
    size_t pos = 0;
    while (pos < sink.text.size()) {
      size_t end = sink.text.find("\n\n", pos);
      if (end == std::string::npos) end = sink.text.size();
      events.emplace_back(sink.text.substr(pos, end - pos));
      pos = end + 2;
    }
    return events;
  }
};

/// A RestFixture behind a real HTTP server (the "http" server of the fixtures).
class RestHttpServer {
 public:
  explicit RestHttpServer(protocol::WireVersion version) : fx_(version) {
    transport::HttpServerOptions opts;
    opts.body_limit = 256;
    opts.transport_error = transport::SurfaceTransportErrors("/a2a/jsonrpc");
    server_ = std::make_unique<transport::HttpServer>(
        fx_.io,
        [this](transport::HttpRequest r) -> boost::asio::awaitable<transport::HttpResponse> {
          co_return co_await fx_.rest->Handle(r);
        },
        opts);
    auto port = server_->Listen("127.0.0.1", 0);
    EXPECT_TRUE(port.ok());
    port_ = port.ok() ? port.value() : 0;
    server_->Start();
    thread_ = std::thread([this] { fx_.io.run(); });
  }
  ~RestHttpServer() {
    server_->Stop();
    WaitFor([&] { return server_->open_connections() == 0; }, std::chrono::seconds(2));
    fx_.io.stop();
    thread_.join();
  }
  RestHttpServer(const RestHttpServer&) = delete;
  RestHttpServer& operator=(const RestHttpServer&) = delete;

  /// The answer to a case: "rawHttp" bytes as they are, else method, target, headers, body.
  boost::json::value Exchange(const boost::json::object& c) {
    HttpClient client("127.0.0.1", port_);
    ClientResponse r;
    if (auto* raw = c.if_contains("rawHttp")) {
      r = client.Raw(std::string(raw->as_string()));
    } else {
      std::vector<std::pair<std::string, std::string>> headers;
      if (auto* h = c.if_contains("headers"))
        for (const auto& kv : h->as_object())
          headers.emplace_back(std::string(kv.key()), std::string(kv.value().as_string()));
      std::string body;
      if (auto* text = c.if_contains("raw"))
        body = std::string(text->as_string());
      else if (auto* b = c.if_contains("body"))
        body = boost::json::serialize(*b);
      r = client.Request(std::string(c.at("method").as_string()),
                         std::string(c.at("target").as_string()), body, headers);
    }
    boost::json::object a{{"status", r.status}, {"contentType", r.Header("Content-Type")}};
    if (auto body = protocol::ParseJson(r.body))
      a["body"] = std::move(body).value();
    else
      a["text"] = r.body;
    return a;
  }

 private:
  RestFixture fx_;
  std::unique_ptr<transport::HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

inline transport::HttpRequest RestRequestOf(const boost::json::object& c) {
  transport::HttpRequest req;
  req.method = std::string(c.at("method").as_string());
  req.target = std::string(c.at("target").as_string());
  if (auto* h = c.if_contains("headers"))
    for (const auto& kv : h->as_object())
      req.headers.emplace_back(std::string(kv.key()), std::string(kv.value().as_string()));
  if (auto* raw = c.if_contains("raw")) {
    req.body = std::string(raw->as_string());
  } else if (auto* body = c.if_contains("body")) {
    req.body = boost::json::serialize(*body);
  }
  if (!req.body.empty() && req.Header("Content-Type").empty())
    req.headers.emplace_back("Content-Type", "application/json");
  return req;
}

inline boost::json::value RestAnswerOf(RestFixture& fx, transport::HttpResponse& res) {
  boost::json::object a{{"status", res.status}, {"contentType", res.content_type}};
  if (!res.headers.empty()) {
    boost::json::object h;
    for (const auto& [k, v] : res.headers) h[k] = v;
    a["headers"] = std::move(h);
  }
  if (res.stream) {
    a["sse"] = fx.Drain(res);
  } else if (auto body = protocol::ParseJson(res.body)) {
    a["body"] = std::move(body).value();
  } else {
    a["text"] = res.body;
  }
  return a;
}

/// Runs every case of the fixture at `relative` (to the source tree) against servers of
/// `version` (see the file comment).
inline void RunRestGolden(const std::string& relative, protocol::WireVersion version) {
  namespace json = boost::json;
  const std::filesystem::path path = std::filesystem::path(A2AD_SOURCE_DIR) / relative;
  json::value doc = json::parse(ReadFile(path));
  const bool update = std::getenv("A2AD_UPDATE_GOLDEN") != nullptr;
  std::map<std::string, std::unique_ptr<RestFixture>, std::less<>> servers;
  std::unique_ptr<RestHttpServer> http;
  for (auto& c : doc.at("cases").as_array()) {
    auto& co = c.as_object();
    const std::string name(co.at("name").as_string());
    const std::string server =
        co.contains("server") ? std::string(co.at("server").as_string()) : "default";
    const auto options = ServerOptionsNamed(server);
    ASSERT_TRUE(options) << name << ": unknown server '" << server << "'";
    json::value actual;
    if (server == "http") {
      if (!http) http = std::make_unique<RestHttpServer>(version);
      actual = http->Exchange(co);
    } else {
      auto& fx = servers[server];
      if (!fx) fx = std::make_unique<RestFixture>(version, *options);
      transport::HttpResponse res = fx->Call(RestRequestOf(co));
      actual = RestAnswerOf(*fx, res);
    }
    if (update) {
      co["expect"] = actual;
    } else {
      ASSERT_TRUE(co.contains("expect"))
          << name << ": no expect member; run with A2AD_UPDATE_GOLDEN=1";
      EXPECT_EQ(actual, co.at("expect"))
          << "case: " << name << "\nactual: " << json::serialize(actual);
    }
  }
  if (update) {
    std::ofstream out(path);
    Pretty(out, doc, 0);
    out << "\n";
  }
}

}  // namespace a2ad::testing

#include "a2ad/net/http_client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <cerrno>
#include <map>
#include <mutex>
#include <span>

#include "a2ad/net/http_io.hpp"

namespace a2ad::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using core::Error;
using core::Result;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::chrono::milliseconds Left(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
}

// What a failed step was, and its words ("timed out" for either timeout).
Error StepFailed(std::string_view step, const boost::system::error_code& ec,
                 EgressFailure otherwise) {
  if (ec == beast::error::timeout)
    return EgressError(EgressFailure::kTimeout, std::string(step) + ": timed out");
  if (ec == http::error::body_limit)
    return EgressError(EgressFailure::kTooLarge, std::string(step) + ": " + ec.message());
  return EgressError(otherwise, std::string(step) + ": " + ec.message());
}

// RFC 9110 token characters (a method) and a field name / value without line breaks.
bool IsToken(std::string_view s) {
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != kExtra.npos;
  });
}
bool IsFieldValue(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

Result<http::request<http::string_body>> BuildRequest(const VettedTarget& target,
                                                      const HttpRequest& in,
                                                      const std::string& user_agent,
                                                      bool keep_alive) {
  if (!IsToken(in.method))
    return EgressError(EgressFailure::kRefused, "method '" + in.method + "' is not an HTTP token");
  http::request<http::string_body> req;
  req.version(11);
  req.method_string(in.method);
  req.target(target.url.target);
  req.set(http::field::user_agent, user_agent);
  for (const auto& [name, value] : in.headers) {
    if (!IsToken(name) || !IsFieldValue(value))
      return EgressError(EgressFailure::kRefused,
                         "header '" + name + "': not a valid field name or value");
    req.set(name, value);
  }
  // The client's own: whatever the caller passed.
  req.set(http::field::host, target.url.HostHeader());
  if (!keep_alive) req.set(http::field::connection, "close");
  req.body() = in.body;
  req.prepare_payload();
  return req;
}

// Connect (each endpoint gets the connect timeout), bounded by the overall deadline.
asio::awaitable<std::optional<Error>> ConnectPinned(beast::tcp_stream& tcp,
                                                    const VettedTarget& target,
                                                    Clock::time_point deadline,
                                                    std::chrono::milliseconds connect_timeout) {
  std::optional<Error> last = EgressError(EgressFailure::kConnect, "no endpoint");
  for (const auto& ep : target.endpoints) {
    auto left = Left(deadline);
    if (left.count() <= 0) co_return EgressError(EgressFailure::kTimeout, "timed out");
    tcp.expires_after(std::min(left, connect_timeout));
    auto [ec] = co_await tcp.async_connect(ep, kTuple);
    if (!ec) co_return std::nullopt;
    last = StepFailed("connect to " + ep.address().to_string() + ":" + std::to_string(ep.port()),
                      ec, EgressFailure::kConnect);
    tcp.close();
  }
  co_return last;
}

// The header fields of a received head, in order.
template <class Fields>
HeaderList HeadersOf(const Fields& fields) {
  HeaderList out;
  for (const auto& field : fields)
    out.emplace_back(std::string(field.name_string()), std::string(field.value()));
  return out;
}

// What an exchange left of its connection: whether any byte of an answer arrived (a
// failure before that may be retried elsewhere) and whether the server keeps it open.
struct ReadInfo {
  bool received = false;
  bool keep_alive = false;
};

// An open connection: TCP, with TLS over it for https.
struct Conn {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  asio::ip::tcp::endpoint remote;
  Clock::time_point idle_since;
  beast::tcp_stream& tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
};

// The connection's reads and writes, TLS or not: each asynchronous operation of the client is
// instantiated here once for TCP and once for TLS (net/http_io.hpp).
asio::awaitable<ReadResult> ReadSome(Conn& c, asio::mutable_buffer into) {
  if (c.tls) {
    auto result = co_await c.tls->async_read_some(into, kTuple);
    co_return result;
  }
  auto result = co_await c.plain->async_read_some(into, kTuple);
  co_return result;
}

asio::awaitable<boost::system::error_code> WriteBuffers(Conn& c,
                                                        std::span<const asio::const_buffer> b) {
  if (c.tls) {
    const auto wrote = co_await asio::async_write(*c.tls, b, kTuple);
    co_return std::get<0>(wrote);
  }
  const auto wrote = co_await asio::async_write(*c.plain, b, kTuple);
  co_return std::get<0>(wrote);
}

// ReadHttp's reads on a connection.
struct Reads {
  Conn& c;
  asio::awaitable<ReadResult> operator()(asio::mutable_buffer into) const {
    return ReadSome(c, into);
  }
};

// Write the request (the stream is connected, TLS done), within the deadline.
asio::awaitable<std::optional<Error>> Write(Conn& c, http::request<http::string_body>& req,
                                            Clock::time_point deadline) {
  c.tcp().expires_after(std::max(Left(deadline), std::chrono::milliseconds(1)));
  http::request_serializer<http::string_body> sr{req};
  const boost::system::error_code ec =
      co_await WriteHttp([&c](const BufferList& list) { return WriteBuffers(c, list); }, sr, false);
  if (ec) co_return StepFailed("write", ec, EgressFailure::kIo);
  co_return std::nullopt;
}

// Write the request, read the answer.
asio::awaitable<Result<HttpResponse>> WriteRead(Conn& c, http::request<http::string_body>& req,
                                                size_t limit, Clock::time_point deadline,
                                                ReadInfo& info) {
  auto remaining = [&] { return std::max(Left(deadline), std::chrono::milliseconds(1)); };
  if (auto failed = co_await Write(c, req, deadline)) co_return std::move(*failed);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(limit);
  parser.header_limit(16 * 1024);
  if (req.method() == http::verb::head) parser.skip(true);
  c.tcp().expires_after(remaining());
  Reads reads{c};
  const boost::system::error_code ec = co_await ReadHttp(reads, buffer, parser, ReadUntil::kWhole);
  info.received = parser.got_some() || buffer.size() > 0;
  if (ec) co_return StepFailed("read response", ec, EgressFailure::kIo);
  info.keep_alive = parser.keep_alive();
  auto& msg = parser.get();
  HttpResponse out;
  out.status = static_cast<int>(msg.result_int());
  out.headers = HeadersOf(msg);
  out.body = std::move(msg.body());
  co_return out;
}

// Write the request, read the head, then the body piece by piece as it arrives (Stream).
asio::awaitable<Result<StreamEnd>> WriteReadStream(
    Conn& c, http::request<http::string_body>& req, size_t limit, Clock::time_point deadline,
    const std::function<bool(std::string_view)>& on_data) {
  auto remaining = [&] { return std::max(Left(deadline), std::chrono::milliseconds(1)); };
  if (auto failed = co_await Write(c, req, deadline)) co_return std::move(*failed);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);
  c.tcp().expires_after(remaining());
  Reads reads{c};
  const boost::system::error_code head_ec =
      co_await ReadHttp(reads, buffer, parser, ReadUntil::kHead);
  if (head_ec) co_return StepFailed("read response head", head_ec, EgressFailure::kIo);
  StreamEnd out;
  out.head.status = static_cast<int>(parser.get().result_int());
  out.head.headers = HeadersOf(parser.get());
  if (out.head.status < 200 || out.head.status > 299) {  // an error answer: read it whole
    parser.body_limit(limit);
    c.tcp().expires_after(remaining());
    const boost::system::error_code ec =
        co_await ReadHttp(reads, buffer, parser, ReadUntil::kWhole);
    if (ec) co_return StepFailed("read response", ec, EgressFailure::kIo);
    out.head.body = std::move(parser.get().body());
    co_return out;
  }
  parser.body_limit(boost::none);  // a stream has no length; each piece is handed on at once
  while (!parser.is_done()) {
    c.tcp().expires_after(remaining());
    const boost::system::error_code ec =
        co_await ReadHttp(reads, buffer, parser, ReadUntil::kProgress);
    std::string& body = parser.get().body();
    if (!body.empty()) {
      const bool more = on_data(body);
      body.clear();
      if (!more) {
        out.how = StreamEnd::How::kStopped;
        co_return out;
      }
    }
    if (ec == beast::error::timeout) {
      out.how = StreamEnd::How::kWindowClosed;
      co_return out;
    }
    if (ec == http::error::end_of_stream || ec == asio::error::eof) break;
    if (ec) co_return StepFailed("read stream", ec, EgressFailure::kIo);
  }
  co_return out;
}

bool IsFollowable(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// The Location resolved against the URL that answered; "" when it is not a URI reference.
std::string ResolveLocation(const std::string& base, std::string_view location) {
  auto b = boost::urls::parse_uri(base);
  auto ref = boost::urls::parse_uri_reference(location);
  if (!b || !ref) return {};
  boost::urls::url out;
  if (!boost::urls::resolve(*b, *ref, out)) return {};
  out.remove_fragment();
  return std::string(out.buffer());
}

}  // namespace

std::string_view HttpResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (IEquals(k, name)) return v;
  return {};
}

struct HttpClient::Tls {
  ssl::context ctx{ssl::context::tls_client};
  // The system trust store is loaded at the first https request, not at startup: parsing the
  // CA bundle costs ~40 ms, most of a2ad's start, and many servers never call out over TLS.
  std::once_flag system_roots;
};

HttpClient::HttpClient(const UrlGuard& guard, HttpClientOptions options)
    : guard_(guard), options_(std::move(options)), tls_(std::make_unique<Tls>()) {
  if (options_.reuse_connections) pool_ = std::make_unique<Pool>();
}

HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::Create(const UrlGuard& guard,
                                                       HttpClientOptions options) {
  std::unique_ptr<HttpClient> client(new HttpClient(guard, std::move(options)));
  auto& ctx = client->tls_->ctx;
  const std::string& ca_file = guard.policy().ca_file;
  if (!ca_file.empty()) {  // loaded now: a wrong CA file fails at startup
    boost::system::error_code ec;
    ctx.load_verify_file(ca_file, ec);
    if (ec)
      return Error(core::ErrorCode::kInvalidParams, "CA file '" + ca_file + "': " + ec.message());
  }
  ctx.set_verify_mode(ssl::verify_peer);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                  ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  return client;
}

asio::awaitable<Result<HttpResponse>> HttpClient::Send(const VettedTarget& target,
                                                       HttpRequest request) const {
  const auto deadline = Clock::now() + request.total_timeout.value_or(options_.total_timeout);
  co_return co_await Exchange(target, request, deadline);
}

asio::awaitable<Result<HttpResponse>> HttpClient::Fetch(HttpRequest request) const {
  const auto deadline = Clock::now() + request.total_timeout.value_or(options_.total_timeout);
  const RedirectPolicy redirects = request.redirects.value_or(guard_.policy().redirects);
  std::string url = request.url;
  auto vetted = co_await guard_.Vet(url);
  if (!vetted) co_return std::move(vetted).error();
  VettedTarget current = std::move(vetted).value();
  for (int hops = 0;; ++hops) {
    auto answer = co_await Exchange(current, request, deadline);
    if (!answer) co_return answer;
    answer->url = url;
    answer->redirects = hops;
    const int status = answer->status;
    const std::string_view location = answer->Header("Location");
    if (redirects.max_redirects <= 0 || !IsFollowable(status) || location.empty()) co_return answer;
    const std::string what = "redirect (" + std::to_string(status) + ")";
    if (hops >= redirects.max_redirects)
      co_return EgressError(
          EgressFailure::kRedirect,
          what + ": more than " + std::to_string(redirects.max_redirects) + " redirect(s)");
    std::string next_url = ResolveLocation(url, location);
    if (next_url.empty())
      co_return EgressError(EgressFailure::kRedirect,
                            what + ": Location '" + std::string(location) + "' is not a URL");
    auto next_parsed = boost::urls::parse_uri(next_url);
    if (current.url.scheme == "https" && next_parsed && next_parsed->scheme() != "https")
      co_return EgressError(
          EgressFailure::kRedirect,
          what + " from https to " + std::string(next_parsed->scheme()) + " refused: " + next_url);
    auto next = co_await guard_.Vet(next_url);
    if (!next) {
      Error e = std::move(next).error();
      e.message = what + " to " + next_url + ": " + e.message;
      co_return e;
    }
    // The method and body the next hop gets.
    if ((status == 303 && request.method != "HEAD") ||
        ((status == 301 || status == 302) && request.method == "POST")) {
      request.method = "GET";
      request.body.clear();
      std::erase_if(request.headers, [](const auto& h) {
        return IEquals(h.first, "Content-Type") || IEquals(h.first, "Content-Length");
      });
    }
    const bool same_origin = next->url.scheme == current.url.scheme &&
                             next->url.host == current.url.host &&
                             next->url.port == current.url.port;
    if (!same_origin)
      std::erase_if(request.headers, [](const auto& h) {
        return IEquals(h.first, "Authorization") || IEquals(h.first, "Proxy-Authorization") ||
               IEquals(h.first, "Cookie");
      });
    url = std::move(next_url);
    current = std::move(next).value();
  }
}

namespace {

// Connects to `target` (TLS for https: SNI, and the name or address verified).
asio::awaitable<Result<Conn>> Connect(ssl::context& ctx, const VettedTarget& target,
                                      Clock::time_point deadline,
                                      std::chrono::milliseconds connect_timeout) {
  auto executor = co_await asio::this_coro::executor;
  Conn c;
  if (target.url.scheme == "https")
    c.tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(executor, ctx);
  else
    c.plain = std::make_unique<beast::tcp_stream>(executor);
  if (auto failed = co_await ConnectPinned(c.tcp(), target, deadline, connect_timeout))
    co_return std::move(*failed);
  boost::system::error_code ignored;
  c.remote = c.tcp().socket().remote_endpoint(ignored);
  if (!c.tls) co_return c;
  if (!target.url.literal) {
    if (!SSL_set_tlsext_host_name(c.tls->native_handle(), target.url.host.c_str()))
      co_return EgressError(EgressFailure::kTls, "TLS: cannot set SNI");
  }
  c.tls->set_verify_callback(ssl::host_name_verification(target.url.host));
  c.tcp().expires_after(std::max(Left(deadline), std::chrono::milliseconds(1)));
  if (auto [ec] = co_await c.tls->async_handshake(ssl::stream_base::client, kTuple); ec)
    co_return StepFailed("TLS handshake", ec, EgressFailure::kTls);
  co_return c;
}

// Ends a connection that is not kept: TLS close_notify (within 500 ms) after an answer, and
// a TCP shutdown.
asio::awaitable<void> Close(Conn& c, bool answered) {
  if (c.tls && answered) {
    c.tcp().expires_after(std::chrono::milliseconds(500));
    (void)co_await c.tls->async_shutdown(kTuple);
  }
  boost::system::error_code ignored;
  c.tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

// Whether an idle connection is still open and quiet: its peer has not closed it and sent
// nothing (an idle HTTP/1.1 connection has nothing to read; TLS close_notify is something).
bool StillOpen(Conn& c) {
  char byte;
  const ssize_t n = ::recv(c.tcp().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// Whether the request may reach the server twice (HttpRequest::replayable).
bool Replayable(const HttpRequest& r) {
  if (r.replayable) return true;
  for (const char* m : {"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
    if (r.method == m) return true;
  return std::any_of(r.headers.begin(), r.headers.end(),
                     [](const auto& h) { return IEquals(h.first, "Idempotency-Key"); });
}

// Connects to `target`, runs `talk(connection)` and closes it. `R` is a
// Result of what talk answers.
template <class R, class Talk>
asio::awaitable<R> OverConnection(ssl::context& tls, const VettedTarget& target,
                                  Clock::time_point deadline,
                                  std::chrono::milliseconds connect_timeout, Talk talk) {
  auto conn = co_await Connect(tls, target, deadline, connect_timeout);
  if (!conn) co_return std::move(conn).error();
  R answer = co_await talk(conn.value());
  co_await Close(conn.value(), static_cast<bool>(answer));
  co_return answer;
}

}  // namespace

// The idle connections of a client that reuses them, by origin ("https://host:443").
struct HttpClient::Pool {
  static constexpr size_t kPerOrigin = 8;
  std::mutex mu;
  std::multimap<std::string, Conn> idle;

  // An idle connection to `key` whose peer is one of `target`'s vetted endpoints; expired
  // and closed ones met on the way are dropped.
  std::optional<Conn> Take(const std::string& key, const VettedTarget& target,
                           std::chrono::milliseconds idle_timeout) {
    const auto now = Clock::now();
    std::lock_guard lock(mu);
    auto [it, end] = idle.equal_range(key);
    while (it != end) {
      Conn& c = it->second;
      if (now - c.idle_since >= idle_timeout || !StillOpen(c)) {
        it = idle.erase(it);
        continue;
      }
      if (std::find(target.endpoints.begin(), target.endpoints.end(), c.remote) !=
          target.endpoints.end()) {
        Conn out = std::move(c);
        idle.erase(it);
        return out;
      }
      ++it;
    }
    return std::nullopt;
  }

  // After an exchange on `c`: kept idle when it answered and the server keeps it alive,
  // else closed.
  asio::awaitable<void> Release(std::string key, Conn& c, bool answered, bool keep_alive,
                                std::chrono::milliseconds idle_timeout, size_t max_idle) {
    if (answered && keep_alive)
      Put(std::move(key), std::move(c), idle_timeout, max_idle);
    else
      co_await Close(c, answered);
  }

  // Keeps `c` idle unless the pool is full (then it is closed).
  void Put(std::string key, Conn c, std::chrono::milliseconds idle_timeout, size_t max_idle) {
    const auto now = Clock::now();
    std::lock_guard lock(mu);
    std::erase_if(idle, [&](auto& kv) { return now - kv.second.idle_since >= idle_timeout; });
    if (idle.size() >= max_idle || idle.count(key) >= kPerOrigin) return;
    c.idle_since = now;
    idle.emplace(std::move(key), std::move(c));
  }
};

ssl::context& HttpClient::TlsContext() const {
  std::call_once(tls_->system_roots, [this] {
    boost::system::error_code ignored;  // no system store: only the CA file is trusted
    tls_->ctx.set_default_verify_paths(ignored);
  });
  return tls_->ctx;
}

// The request built for `target` (BuildRequest), then `talk(connection, req, limit)` over a
// connection (OverConnection) with the request's limits.
template <class R, class Fn>
asio::awaitable<R> HttpClient::OverRequest(const VettedTarget& target, const HttpRequest& request,
                                           Deadline deadline, Fn talk) const {
  auto built = BuildRequest(target, request, options_.user_agent, false);
  if (!built) co_return std::move(built).error();
  auto req = std::move(built).value();
  const size_t limit = request.max_response_bytes.value_or(options_.max_response_bytes);
  const auto connect_timeout = request.connect_timeout.value_or(options_.connect_timeout);
  co_return co_await OverConnection<R>(target.url.scheme == "https" ? TlsContext() : tls_->ctx,
                                       target, deadline, connect_timeout,
                                       [&](Conn& c) { return talk(c, req, limit); });
}

asio::awaitable<Result<HttpResponse>> HttpClient::Exchange(const VettedTarget& target,
                                                           const HttpRequest& request,
                                                           Deadline deadline) const {
  ReadInfo info;  // here: the exchange's coroutine refers to it until it ends
  if (!pool_)
    co_return co_await OverRequest<Result<HttpResponse>>(
        target, request, deadline, [deadline, &info](Conn& c, auto& req, size_t limit) {
          return WriteRead(c, req, limit, deadline, info);
        });
  auto built = BuildRequest(target, request, options_.user_agent, true);
  if (!built) co_return std::move(built).error();
  auto req = std::move(built).value();
  const size_t limit = request.max_response_bytes.value_or(options_.max_response_bytes);
  const std::string key =
      target.url.scheme + "://" + target.url.host + ":" + std::to_string(target.url.port);
  auto talk = [&](Conn& c) { return WriteRead(c, req, limit, deadline, info); };
  if (auto idle = pool_->Take(key, target, options_.idle_timeout)) {
    auto answer = co_await talk(*idle);
    // A failure with nothing answered: the server closed it while idle. A request that may
    // be sent twice goes on a fresh connection; any other fails here.
    if (answer || info.received || !Replayable(request)) {
      co_await pool_->Release(key, *idle, static_cast<bool>(answer), info.keep_alive,
                              options_.idle_timeout, options_.max_idle);
      co_return answer;
    }
    info = ReadInfo{};
  }
  auto conn =
      co_await Connect(target.url.scheme == "https" ? TlsContext() : tls_->ctx, target, deadline,
                       request.connect_timeout.value_or(options_.connect_timeout));
  if (!conn) co_return std::move(conn).error();
  auto answer = co_await talk(conn.value());
  co_await pool_->Release(key, conn.value(), static_cast<bool>(answer), info.keep_alive,
                          options_.idle_timeout, options_.max_idle);
  co_return answer;
}

asio::awaitable<Result<StreamEnd>> HttpClient::Stream(
    HttpRequest request, std::function<bool(std::string_view)> on_data) const {
  const auto deadline = Clock::now() + request.total_timeout.value_or(options_.total_timeout);
  auto vetted = co_await guard_.Vet(request.url);
  if (!vetted) co_return std::move(vetted).error();
  co_return co_await OverRequest<Result<StreamEnd>>(
      vetted.value(), request, deadline, [deadline, &on_data](Conn& c, auto& req, size_t limit) {
        return WriteReadStream(c, req, limit, deadline, on_data);
      });
}

}  // namespace a2ad::net

#include "a2ad/transport/http/http_server.hpp"

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "a2ad/core/log.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http/http_server_impl.hpp"
#include "a2ad/transport/http/request_line.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using core::Error;
using core::ErrorCode;
using namespace http_conn;

namespace {

// An error answer's write; a client that does not read it is cut off.
constexpr std::chrono::seconds kErrorWriteTimeout{5};
// A connection over a cap is given this long to send its request line before the 503.
constexpr std::chrono::seconds kRefusalRead{1};
// Refusals in progress (each holds a socket for up to about 2 s); past this many, a flood
// of connections over the caps is closed without an answer so that refusing cannot
// exhaust descriptors either.
constexpr size_t kMaxRefusing = 1024;
// A refused connection is logged at most this often (with the count since the last line).
constexpr std::chrono::seconds kRefusalLogEvery{1};

}  // namespace

HttpServer::Impl::Impl(asio::io_context& io_, HttpHandler h, HttpServerOptions o)
    : io(io_), handler(std::move(h)), opts(std::move(o)), acceptor(asio::make_strand(io_)) {}

asio::awaitable<void> HttpServer::Impl::AcceptLoop() {
  auto self = shared_from_this();
  for (;;) {
    auto [ec, sock] =
        co_await acceptor.async_accept(asio::make_strand(io), asio::as_tuple(asio::use_awaitable));
    if (stopping || ec == asio::error::operation_aborted) co_return;
    if (ec) {
      // Out of descriptors and the like: log, back off briefly, keep serving.
      core::LogWarn("accept failed: " + ec.message());
      asio::steady_timer t(acceptor.get_executor(), std::chrono::milliseconds(50));
      co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    boost::system::error_code ep_ec;
    const tcp::endpoint remote = sock.remote_endpoint(ep_ec);
    if (ep_ec) continue;  // the client is gone already; `sock` closes here
    boost::system::error_code ignored;
    sock.set_option(tcp::no_delay(true), ignored);
    auto conn = std::make_shared<Conn>(std::move(sock), remote.address(), opts.tls.get(),
                                       net::InAnyCidr(remote.address(), opts.trusted_proxies));
    if (const char* cap = Admit(conn)) {
      Refuse(conn, remote, cap);
      continue;
    }
    asio::co_spawn(conn->stream.get_executor(), Session(conn),
                   [self, conn](const std::exception_ptr& ep) {
                     if (ep) core::LogError("connection coroutine ended with an exception");
                     self->Release(conn);
                   });
  }
}

const char* HttpServer::Impl::Admit(const std::shared_ptr<Conn>& c) {
  std::lock_guard lock(mu);
  if (conns.size() >= opts.max_connections) return "--max-connections";
  if (!c->trusted_proxy) {
    auto it = per_address.find(c->address);
    if (it != per_address.end() && it->second >= opts.max_connections_per_address)
      return "--max-connections-per-address";
    ++per_address[c->address];
    c->address_counted = true;
  }
  conns.insert(c);
  return nullptr;
}

void HttpServer::Impl::Release(const std::shared_ptr<Conn>& c) {
  std::lock_guard lock(mu);
  if (conns.erase(c) != 0) UncountAddress(*c);
}

void HttpServer::Impl::ReleaseAddressOf(const std::shared_ptr<Conn>& c) {
  std::lock_guard lock(mu);
  UncountAddress(*c);
}

void HttpServer::Impl::UncountAddress(Conn& c) {
  if (c.address_counted) ReleaseAddress(c.address);
  c.address_counted = false;
}

void HttpServer::Impl::ReleaseAddress(const AddressKey& key) {
  auto it = per_address.find(key);
  if (it != per_address.end() && --it->second == 0) per_address.erase(it);
}

bool HttpServer::Impl::HoldForwarded(ForwardedSlot& slot, const asio::ip::address& client) {
  const AddressKey key = KeyOf(client);
  std::lock_guard lock(mu);
  size_t& n = per_address[key];
  if (n >= opts.max_connections_per_address) {
    if (n == 0) per_address.erase(key);
    return false;
  }
  ++n;
  slot.impl = this;
  slot.key = key;
  return true;
}

void HttpServer::Impl::Refuse(const std::shared_ptr<Conn>& c, const tcp::endpoint& remote,
                              const char* cap) {
  ++refused_since_log;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log >= kRefusalLogEvery) {
    core::LogWarn("refusing connections over " + std::string(cap) +
                  " with 503: " + std::to_string(refused_since_log) +
                  " since the last warning, the latest from " + remote.address().to_string());
    last_refusal_log = now;
    refused_since_log = 0;
  }
  if (refusing.fetch_add(1) >= kMaxRefusing) {
    --refusing;
    boost::system::error_code ignored;
    c->stream.socket().close(ignored);
    return;
  }
  auto self = shared_from_this();
  asio::co_spawn(c->stream.get_executor(), Refusal(c), [self, c](const std::exception_ptr& ep) {
    if (ep) core::LogError("refusal coroutine ended with an exception");
    --self->refusing;
  });
}

asio::awaitable<void> HttpServer::Impl::Refusal(std::shared_ptr<Conn> c) {
  if (!co_await Handshake(*c, kRefusalRead)) {
    c->stream.close();
    co_return;
  }
  std::string head;
  std::array<char, 1024> scratch;
  c->ArmReadDeadline(kRefusalRead);
  while (head.find("\r\n") == std::string::npos && head.size() < opts.header_limit) {
    auto [ec, n] = co_await ReadSome(*c, asio::buffer(scratch));
    if (ec) break;
    head.append(scratch.data(), n);
  }
  c->DisarmReadDeadline();
  if (head.empty() && !c->timed_out) {
    c->stream.close();
    co_return;
  }
  co_await WriteError(*c, PathOfRequestLine(head, opts.header_limit), 503, "service_unavailable",
                      "too many connections; retry later");
  co_await LingeringClose(*c);
}

HttpResponse HttpServer::Impl::TransportError(std::string_view path, int status,
                                              std::string_view code, std::string message) {
  if (opts.transport_error) {
    try {
      HttpResponse r = opts.transport_error(path, status, code, message);
      r.status = status;
      return r;
    } catch (const std::exception& e) {
      core::LogError(std::string("transport_error threw: ") + e.what());
    }
  }
  return DefaultTransportError(path, status, code, std::move(message));
}

asio::awaitable<void> HttpServer::Impl::WriteError(Conn& c, std::string path, int status,
                                                   std::string_view code, std::string message) {
  HttpResponse r = TransportError(path, status, code, std::move(message));
  r.stream = nullptr;
  if (status == 503) r.headers.emplace_back("Retry-After", "1");
  auto res = ToBeast(std::move(r), 11, false);
  http::response_serializer<http::string_body> sr{res};
  co_await WriteMessage(c, sr, false, kErrorWriteTimeout);
}

HttpResponse DefaultTransportError(std::string_view path, int status, std::string_view code,
                                   std::string message) {
  (void)path;
  return RestErrorResponse(status, code, std::move(message));
}

HttpServer::HttpServer(asio::io_context& io, HttpHandler handler, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() {
  // Stop() locks and posts, which can throw (resource exhaustion); a destructor must not.
  try {
    Stop();
  } catch (const std::exception& e) {
    core::LogError(std::string("http server: stopping threw: ") + e.what());
  } catch (...) {
    core::LogError("http server: stopping threw");
  }
}

core::Result<uint16_t> HttpServer::Listen(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  asio::ip::address addr = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec)
    return Error(ErrorCode::kInvalidParams, "listen address '" + host + "' is not an IP address");
  tcp::endpoint ep(addr, port);
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Error(ErrorCode::kUnavailable,
                 "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  return a.local_endpoint().port();
}

void HttpServer::Start() {
  auto impl = impl_;
  asio::co_spawn(impl->acceptor.get_executor(), impl->AcceptLoop(),
                 [impl](const std::exception_ptr& ep) {
                   if (ep) core::LogError("accept loop ended with an exception");
                 });
}

void HttpServer::Stop() {
  auto impl = impl_;
  if (impl->stopping.exchange(true)) return;
  asio::post(impl->acceptor.get_executor(), [impl] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
  std::lock_guard lock(impl->mu);
  for (const auto& c : impl->conns) {
    asio::post(c->stream.get_executor(), [c] {
      if (auto sink = c->sink.lock()) {
        sink->Stopping();  // a stream: it sends a last event and ends
      } else if (!c->busy) {
        c->stream.cancel();  // idle: end its read now; busy ones close after replying
      }
    });
  }
}

size_t HttpServer::open_connections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->conns.size();
}

}  // namespace a2ad::transport

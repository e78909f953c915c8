#pragma once
// The state of one HttpServer (internal to transport/http): its acceptor, open connections and
// caps. The accept loop, admission and refusals are in http_server.cpp, a connection's request
// loop (Session) in http_session.cpp.
//
// Thread safety: `conns` and `per_address` under `mu`; the refusal log on the acceptor's
// strand; a connection's Session on the connection's strand.
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

#include "a2ad/transport/http/connection.hpp"
#include "a2ad/transport/http/http_server.hpp"

namespace a2ad::transport {

struct HttpServer::Impl : std::enable_shared_from_this<Impl> {
  using Conn = http_conn::Conn;
  using AddressKey = http_conn::AddressKey;

  Impl(boost::asio::io_context& io_, HttpHandler h, HttpServerOptions o);

  boost::asio::io_context& io;
  HttpHandler handler;
  HttpServerOptions opts;
  boost::asio::ip::tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::unordered_set<std::shared_ptr<Conn>> conns;  // guarded by mu
  std::map<AddressKey, size_t> per_address;         // open connections per client; mu
  std::atomic<size_t> refusing{0};                  // Refusal coroutines running
  // Refusal logging; touched only by the accept loop (on the acceptor's strand).
  std::chrono::steady_clock::time_point last_refusal_log{};
  size_t refused_since_log = 0;

  boost::asio::awaitable<void> AcceptLoop();

  /// Counts `c` as open unless that would pass a cap; then returns the cap's flag name.
  const char* Admit(const std::shared_ptr<Conn>& c);
  void Release(const std::shared_ptr<Conn>& c);
  /// Stops counting `c` against its address's cap (it stays counted against
  /// --max-connections until Release). Called as the server starts to close it, before the
  /// client can see the close, so a client that reconnects at once is not refused.
  void ReleaseAddressOf(const std::shared_ptr<Conn>& c);
  void UncountAddress(Conn& c);                // under mu; once per connection
  void ReleaseAddress(const AddressKey& key);  // under mu

  /// A request forwarded by a trusted proxy for `client`, counted against the client's
  /// address while it is in flight (a stream until it ends). Empty (nothing held) when the
  /// client is at its cap.
  struct ForwardedSlot {
    Impl* impl = nullptr;
    AddressKey key{};
    ForwardedSlot() = default;
    ForwardedSlot(const ForwardedSlot&) = delete;
    ForwardedSlot& operator=(const ForwardedSlot&) = delete;
    ~ForwardedSlot() { Release(); }
    /// Gives the slot back now (once; the destructor then does nothing).
    void Release() {
      if (!impl) return;
      std::lock_guard lock(impl->mu);
      impl->ReleaseAddress(key);
      impl = nullptr;
    }
  };
  bool HoldForwarded(ForwardedSlot& slot, const boost::asio::ip::address& client);

  /// Answers a connection over a cap with 503 (in its own coroutine) and logs it, at most
  /// once per kRefusalLogEvery. On the acceptor's strand.
  void Refuse(const std::shared_ptr<Conn>& c, const boost::asio::ip::tcp::endpoint& remote,
              const char* cap);

  /// A connection over a cap: its request line is read first (for at most kRefusalRead), so
  /// the 503 has the shape of the surface the client meant, then the 503 is written and the
  /// connection closed lingering (the client may still be sending its head and body; see
  /// LingeringClose). A client that leaves without sending anything gets nothing.
  boost::asio::awaitable<void> Refusal(std::shared_ptr<Conn> c);

  /// The body of an error the server answers itself, shaped by opts.transport_error (the
  /// default when it is unset or throws).
  HttpResponse TransportError(std::string_view path, int status, std::string_view code,
                              std::string message);

  /// Writes an error answer with `Connection: close` (and `Retry-After: 1` on a 503).
  boost::asio::awaitable<void> WriteError(Conn& c, std::string path, int status,
                                          std::string_view code, std::string message);

  /// One connection's requests, one after the other, until it closes (http_session.cpp).
  boost::asio::awaitable<void> Session(std::shared_ptr<Conn> c);
};

}  // namespace a2ad::transport

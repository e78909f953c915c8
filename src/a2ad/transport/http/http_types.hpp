#pragma once
// Transport-neutral request/response values, so handlers need no Beast headers.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "a2ad/protocol/call_context.hpp"

namespace a2ad::tasks {
struct StreamItem;
}

namespace a2ad::transport {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path + query, as received
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// Who sent it, once the router has authenticated it (auth.hpp); never read from the wire.
  /// nullopt: not authenticated by anyone (a server without an Authenticator, in-process
  /// tests): the bindings then call as the anonymous development caller.
  std::optional<protocol::Principal> principal;
  /// Mutual TLS: the RFC 2253 subject of the client certificate the connection's handshake
  /// verified ("CN=billing-agent,O=Acme"); "" for none (plain HTTP, no certificate). Set by
  /// the server (gRPC: from the call's auth context), never read from the wire.
  std::string client_cert_subject;
  /// The client's IP address: the peer's, or the one a trusted proxy forwarded for it
  /// (forwarded.hpp). Set by the server, never read from the wire as such; "" in-process.
  std::string client_address;

  /// Case-insensitive header lookup; "" if absent.
  std::string_view Header(std::string_view name) const;
  /// The path part of target (before '?').
  std::string_view Path() const;
  /// The decoded value of the query parameter `name`; "" when absent or not decodable.
  std::string Query(std::string_view name) const;
};

/// Where a streaming (SSE) response writes. Owned by the server; used by one coroutine.
class SseSink {
 public:
  virtual ~SseSink() = default;
  /// Writes `bytes` to the client. false once the client is gone or a write timed out
  /// (then stop: the connection is being closed).
  virtual boost::asio::awaitable<bool> Write(std::string bytes) = 0;
  /// Writes stream items as they are (SsePumpSpec::keeps); only a sink that writes its own
  /// form of them has it: this one refuses (false).
  virtual boost::asio::awaitable<bool> WriteItems(
      std::vector<std::shared_ptr<const tasks::StreamItem>> items);
  /// The stream is about to wait for events that may be long in coming: what the sink holds
  /// back goes out now (ConnSink holds back the response's head, to send it with the first
  /// events). false once the client is gone. The default holds nothing back.
  virtual boost::asio::awaitable<bool> Waiting();
  /// The next Write is the stream's last: the sink may end the response in the same write
  /// (ConnSink: the last chunk of a chunked body). A stream whose events are all at hand (a
  /// blocking echo, a finished task's snapshot) is then one write, head to end.
  virtual void Ending() {}
  /// `f` runs once, on the connection's executor, when the client disconnects (or at once
  /// if it already has). Lets a stream waiting for events stop and free them immediately.
  virtual void OnClientGone(std::function<void()> f) = 0;
  /// `f` runs once, on the connection's executor, when the server begins shutting down;
  /// the stream should send a last event and end.
  virtual void OnServerStopping(std::function<void()> f) = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// When set, the response is a `text/event-stream`: the server runs `stream`, and sends
  /// the head (200, no-cache) with its first write. A stream must call SseSink::Waiting
  /// before it waits for anything (PumpStream does), so that the client has the head while
  /// it waits. On HTTP/1.1 keep-alive connections the body is chunked and the connection
  /// serves the next request after it; otherwise it closes.
  std::function<boost::asio::awaitable<void>(SseSink&)> stream;
  /// What the access log says of the request besides its route (router.hpp): the operation
  /// a binding ran ("SendMessage", "tasks/get") and the task (or run) it was about.
  std::string log_operation;
  std::string log_task;
  std::string log_error;  // the error code a 200 answer carries (a JSON-RPC error)
};

/// Answers of lists that left out records which cannot be read (damaged stored text, see
/// `a2ad doctor`) carry their number in this header: JSON-RPC results and the A2A list
/// schema have no member for it.
inline constexpr const char* kSkippedUnreadableHeader = "A2AD-Skipped-Unreadable";

/// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);
/// A weak validator for a fixed body: W/"<first 16 hex digits of its SHA-256>".
std::string WeakEtag(std::string_view body);

/// `s` with %XX escapes decoded and '+' read as a space (query strings); a malformed escape
/// stays as written.
std::string PercentDecode(std::string_view s);
/// The query parameters of `target` (after '?'), decoded; a repeated name keeps its last
/// value; a name without '=' has value "".
std::map<std::string, std::string> QueryParams(std::string_view target);

/// `t` as an HTTP date (IMF-fixdate, RFC 9110 §5.6.7): "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDate(std::chrono::system_clock::time_point t);

/// A JSON response with `status`.
HttpResponse JsonResponse(int status, std::string body);

/// Shapes an error the HTTP server answers itself, before or instead of the handler (a
/// malformed request, a timeout, a limit, a refused connection, a handler that threw).
/// `path` is the request's path ("" when it is not known, e.g. the request line itself was
/// bad or too long); `code` is the OpenWOP snake_case code of `status`; `message` says what
/// went wrong without internal detail. The server sets the status and the transport headers
/// (Connection: close, Retry-After) itself. Called on the connection's executor; must not
/// block.
using TransportErrorFn = std::function<HttpResponse(std::string_view path, int status,
                                                    std::string_view code, std::string message)>;

}  // namespace a2ad::transport

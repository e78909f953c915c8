#pragma once
// A blocking SSE client for tests: POSTs a JSON-RPC request over a real loopback socket and
// reads the event stream event by event.
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace a2ad::testing {

struct SseEvent {
  std::string id;     // "" if the event had no id line
  std::string event;  // "" for a plain message event
  std::string data;
  bool comment = false;  // a ":" line only (heartbeat)
  boost::json::value Json() const;
};

class SseClient {
 public:
  /// Connects and sends `body` as a POST to `path`. Throws on connect/write failure.
  SseClient(const std::string& host, uint16_t port, const std::string& path,
            const std::string& body, std::vector<std::pair<std::string, std::string>> headers = {},
            const std::string& method = "POST");
  ~SseClient();
  SseClient(const SseClient&) = delete;

  int status() const { return status_; }
  const std::string& content_type() const { return content_type_; }
  /// The body of a non-streaming (JSON) answer, once the connection closed.
  std::string ReadAll();
  /// The next event or comment; nullopt at end of stream or after `timeout` (timed_out()).
  std::optional<SseEvent> Next(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  bool timed_out() const { return timed_out_; }
  bool ended() const { return ended_; }
  /// Reads events (skipping comments) until the stream ends.
  std::vector<SseEvent> ReadToEnd(std::chrono::milliseconds per_event = std::chrono::seconds(10));
  /// Closes the socket (a client dropping the stream).
  void Close();

 private:
  bool Fill(std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::string buf_;
  int status_ = 0;
  std::string content_type_;
  bool timed_out_ = false;
  bool ended_ = false;
};

}  // namespace a2ad::testing

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
  /// Sends the next request on the same connection (after a chunked stream ended) and reads
  /// its response head. Throws if the connection is gone.
  void Again(const std::string& path, const std::string& body,
             std::vector<std::pair<std::string, std::string>> headers = {},
             const std::string& method = "POST");
  /// Writes another request now, while the current response still streams (pipelining).
  void Pipeline(const std::string& path, const std::string& body) { Write(path, body, {}, "POST"); }
  /// After a chunked response ended: reads the head of the next one on the connection.
  void NextResponse();

  int status() const { return status_; }
  const std::string& content_type() const { return content_type_; }
  /// The body of a non-streaming (JSON) answer, once the connection closed.
  std::string ReadAll();
  /// The next event or comment; nullopt at end of stream or after `timeout` (timed_out()).
  std::optional<SseEvent> Next(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  bool timed_out() const { return timed_out_; }
  /// The stream is over: the server closed the connection or (chunked) sent the last chunk.
  bool ended() const { return ended_; }
  /// The response came with Transfer-Encoding: chunked (the connection then stays open).
  bool chunked() const { return chunked_; }
  /// Reads events (skipping comments) until the stream ends.
  std::vector<SseEvent> ReadToEnd(std::chrono::milliseconds per_event = std::chrono::seconds(10));
  /// Closes the socket (a client dropping the stream).
  void Close();

 private:
  void Write(const std::string& path, const std::string& body,
             const std::vector<std::pair<std::string, std::string>>& headers,
             const std::string& method);
  void ReadHead();
  bool Fill(std::chrono::milliseconds timeout);
  bool Decode();  // chunked: moves whole chunks from raw_ to buf_; true if any moved
  int fd_ = -1;
  std::string host_;
  std::string buf_;  // body bytes (de-chunked)
  std::string raw_;  // chunked: bytes as received, not yet decoded
  bool chunked_ = false;
  // A body with a Content-Length (an error answered as one event, a JSON answer): the bytes
  // of it still to come; the response is over when none are.
  std::optional<size_t> body_left_;
  int status_ = 0;
  std::string content_type_;
  bool timed_out_ = false;
  bool ended_ = false;
};

}  // namespace a2ad::testing

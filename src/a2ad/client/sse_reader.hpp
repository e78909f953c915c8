#pragma once
// SseReader: server-sent events (the WHATWG HTML event-stream format) read from pieces of a
// response body as they arrive. Lines end with LF, CRLF or CR; a blank line dispatches the
// event; `data:` lines join with LF; `id:` and `event:` are kept; comments (`:`) and `retry:`
// are skipped; a single space after the colon is dropped. An event with no data is not
// dispatched (it may still set the last event id).
//
// Limits: an event's buffered bytes (the line in progress and the data so far) may not pass
// max_event_bytes; Feed then answers false and the reader is spent (the caller drops the
// stream: it is hostile or broken).
//
// Thread safety: one reader per stream, used by one coroutine.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace a2ad::client {

struct SseEvent {
  std::string id;     // the last event id in force when it was dispatched
  std::string event;  // "" = "message"
  std::string data;
};

class SseReader {
 public:
  explicit SseReader(size_t max_event_bytes = size_t{4} * 1024 * 1024) : max_(max_event_bytes) {}
  /// Reads `bytes`, appending each complete event to `out`. False past the limit.
  bool Feed(std::string_view bytes, std::vector<SseEvent>& out);
  const std::string& last_event_id() const { return last_id_; }

 private:
  void Line(std::string_view line, std::vector<SseEvent>& out);
  size_t max_;
  bool spent_ = false;
  bool after_cr_ = false;  // the last byte was CR: an LF next ends nothing more
  std::string line_;
  std::string data_, event_, last_id_;
  bool has_data_ = false;
};

}  // namespace a2ad::client

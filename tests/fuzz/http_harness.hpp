#pragma once
// An in-process a2ad for the fuzz targets that speak HTTP (jsonrpc_fuzz, rest_fuzz,
// event_cursor_fuzz): a fresh World per input, so an input always means the same thing
// and a crash reproduces from its file alone.
//
// Time never passes inside a World: the clock is a ManualClock (one second per request, as
// the golden fixtures do) and the io_context is only polled, never run, so a timer (a
// long-poll's timeout, a delay node, a stream heartbeat) simply never fires. A request whose
// answer waits on one is left pending; a stream still open once nothing is runnable is ended
// as a client disconnect (and must then end).
//
// Thread safety: none; one World per thread (libFuzzer runs one input at a time).
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::fuzz {

/// Splits a fuzz input into requests. Records are separated by a line "----" (at most
/// `max_requests` are read). A record is: the request line "METHOD TARGET" when
/// `request_line` (else every request is POST /v1/a2a), then header lines "Name: value"
/// (a name of letters, digits and '-'), then an optional empty line, then the body (the
/// rest of the record).
std::vector<transport::HttpRequest> SplitRequests(std::string_view input, bool request_line,
                                                  size_t max_requests);

/// Writes `requests` back in the SplitRequests form (seed corpus generation).
std::string JoinRequests(const std::vector<transport::HttpRequest>& requests, bool request_line);

struct Exchange {
  bool answered = false;  // false: still waiting on a timer when the World went idle
  transport::HttpResponse response;
  std::vector<std::string> sse;  // a stream's writes, split into events (no blank lines)
};

struct WorldOptions {
  bool openwop = false;  // the workflows of workflows/ and the OpenWOP REST API
  bool push = false;     // push-config methods and push routes (memory store, no network)
};

class World {
 public:
  explicit World(WorldOptions options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  /// Serves `request` through the Router (an exception escaping it is an invariant failure);
  /// a stream is drained (A2AD_FUZZ_TRACE=1 prints both on stderr). The interrupt token of the
  /// latest answer that carried one replaces
  /// "@TOKEN@" in the target and body.
  Exchange Call(transport::HttpRequest request);

 private:
  struct Parts;
  void Poll();
  void DrainStream(Exchange& exchange);

  std::unique_ptr<Parts> parts_;
  std::string last_token_;
};

/// Every byte of `s` percent-encoded ("%41%42"): a query value that decodes to exactly `s`.
std::string PercentEncodeAll(std::string_view s);

}  // namespace a2ad::fuzz

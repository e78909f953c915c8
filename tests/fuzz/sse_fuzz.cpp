// sse_fuzz: the event stream another agent sends a2ad (client/sse_reader.hpp, read by
// A2aClient::Stream when a node follows a peer's task by stream, and by `a2a watch`), untrusted
// bytes that arrive in pieces of any size. Properties:
//  - the reader never crashes, and the events do not depend on where the bytes were cut: the
//    input fed whole, and fed in two pieces at a cut point the input chooses, give the same
//    events (data, id, event name) and the same last event id;
//  - past the limit (64 bytes here) the reader refuses the rest, in either feeding;
//  - every event's data normalizes (NormalizeStreamEvent) to one of the five kinds.
#include <cstdint>
#include <string>
#include <vector>

#include "a2ad/client/a2a_client.hpp"
#include "a2ad/client/sse_reader.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "fuzz_check.hpp"

using namespace a2ad;

namespace {
struct Fed {
  bool ok = true;
  std::vector<client::SseEvent> events;
  std::string last_id;
};
Fed FeedAll(const std::vector<std::string_view>& pieces, size_t limit) {
  client::SseReader r(limit);
  Fed f;
  for (auto p : pieces) f.ok = r.Feed(p, f.events) && f.ok;
  f.last_id = r.last_event_id();
  return f;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t cut = data[0] % size;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t at = std::min(cut, in.size());
  for (size_t limit : {size_t{64}, size_t{1} << 20}) {
    Fed whole = FeedAll({in}, limit);
    Fed split = FeedAll({in.substr(0, at), in.substr(at)}, limit);
    FUZZ_CHECK(whole.ok == split.ok, std::string(in));
    if (!whole.ok) continue;
    FUZZ_CHECK(whole.events.size() == split.events.size(), std::string(in));
    for (size_t i = 0; i < whole.events.size(); ++i) {
      FUZZ_CHECK(whole.events[i].data == split.events[i].data, std::string(in));
      FUZZ_CHECK(whole.events[i].id == split.events[i].id, std::string(in));
      FUZZ_CHECK(whole.events[i].event == split.events[i].event, std::string(in));
    }
    FUZZ_CHECK(whole.last_id == split.last_id, std::string(in));
    for (const auto& e : whole.events) {
      auto parsed = protocol::ParseJson(e.data);
      if (!parsed) continue;
      const auto ev = client::NormalizeStreamEvent(parsed.value());
      const std::string kind(ev.at("kind").as_string());
      FUZZ_CHECK(kind == "task" || kind == "message" || kind == "status" || kind == "artifact" ||
                     kind == "unknown",
                 kind);
    }
  }
  return 0;
}

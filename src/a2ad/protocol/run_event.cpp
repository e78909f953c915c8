#include "a2ad/protocol/run_event.hpp"

#include "a2ad/core/clock.hpp"

namespace a2ad::protocol {
namespace json = boost::json;

json::object RunEventToJson(const RunEvent& e) {
  json::object o;
  o["eventId"] = e.event_id;
  o["runId"] = e.run_id;
  if (!e.node_id.empty()) o["nodeId"] = e.node_id;
  o["type"] = e.type;
  o["payload"] = e.payload;
  o["timestamp"] = core::FormatTimestamp(e.timestamp_ms);
  o["sequence"] = e.sequence;
  return o;
}

bool RunEventFromJson(const json::object& o, RunEvent& out) {
  auto str = [&](const char* k, std::string& dst, bool required) {
    auto* v = o.if_contains(k);
    if (!v) return !required;
    if (!v->is_string()) return false;
    dst = v->get_string();
    return true;
  };
  if (!str("eventId", out.event_id, true) || !str("runId", out.run_id, true) ||
      !str("type", out.type, true) || !str("nodeId", out.node_id, false))
    return false;
  auto* p = o.if_contains("payload");
  auto* t = o.if_contains("timestamp");
  auto* s = o.if_contains("sequence");
  if (!p || !p->is_object() || !t || !t->is_string() || !s || !s->is_int64()) return false;
  out.payload = p->get_object();
  out.sequence = s->get_int64();
  return core::ParseTimestamp(t->get_string(), out.timestamp_ms);
}

}  // namespace a2ad::protocol

#pragma once
// Generated A2A model values for tests that hold two writers of them equal (the JSON encoder's
// sinks, the gRPC messages written from the model): every field set or left empty by chance,
// strings with escapes, control bytes, multi-byte and ill-formed UTF-8, JSON values of every
// kind. Deterministic for a seed.
#include <boost/json.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/protocol/model.hpp"

namespace a2ad::testing {

// The reference for the writer's departure from Boost, written plainly (byte by byte, where
// the writer scans words): each maximal ill-formed subpart of UTF-8 (Unicode §3.9, Table
// 3-7) becomes U+FFFD. Pinned by JsonText.IllFormedUtf8BecomesReplacementCharacters
// (json_text_test).
inline std::string ReplaceIllFormedUtf8(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;  // of the well-formed sequence starting here
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80)
      len = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      len = 2;
    else if (c == 0xE0)
      len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC)
      len = 3;
    else if (c == 0xED)
      len = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF)
      len = 3;
    else if (c == 0xF0)
      len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
      len = 4;
    else if (c == 0xF4)
      len = 4, hi = 0x8F;
    size_t good = len == 0 ? 0 : 1;  // bytes of the sequence that fit so far
    while (good > 0 && good < len && i + good < s.size()) {
      const auto b = static_cast<unsigned char>(s[i + good]);
      if (b < (good == 1 ? lo : 0x80) || b > (good == 1 ? hi : 0xBF)) break;
      ++good;
    }
    if (len != 0 && good == len) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += good == 0 ? 1 : good;
    }
  }
  return out;
}

// What ModelGen makes: the model's types, and JSON.
using protocol::Artifact;
using protocol::Message;
using protocol::Part;
using protocol::Role;
using protocol::Task;
using protocol::TaskState;
namespace json = boost::json;

class ModelGen {
 public:
  explicit ModelGen(uint32_t seed) : rng_(seed) {}

  bool Coin(int percent = 50) { return Int(0, 99) < percent; }
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string Str(int max_len = 12) {
    static const std::vector<std::string> kPieces = {
        "a", "Z", "0", " ", "/", "\"", "\\", "\x7f", "é", "日本", "😀", "\xc3", "\xff", "ok"};
    std::string s;
    const int n = Int(0, max_len);
    for (int i = 0; i < n; ++i) {
      if (Coin(25))
        s.push_back(static_cast<char>(Int(0, 0x1f)));  // any control byte
      else
        s += kPieces[static_cast<size_t>(Int(0, static_cast<int>(kPieces.size()) - 1))];
    }
    return s;
  }

  json::value Value(int depth) {
    switch (Int(0, depth > 0 ? 8 : 6)) {
      case 0:
        return nullptr;
      case 1:
        return Coin();
      case 2:
        return static_cast<int64_t>(rng_()) - (int64_t{1} << 31);
      case 3:
        return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(Int(0, 5));
      case 4:
        return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
      case 5:
      case 6:
        return json::value(Str());
      case 7: {
        json::array a;
        for (int i = Int(0, 4); i > 0; --i) a.push_back(Value(depth - 1));
        return a;
      }
      default:
        return Object(depth - 1);
    }
  }

  json::object Object(int depth) {
    json::object o;
    // Member names stay UTF-8: two names that differ only in bytes that are not would both
    // be written as U+FFFD, one name in the expected DOM.
    for (int i = Int(0, 4); i > 0; --i) o[ReplaceIllFormedUtf8(Str(6))] = Value(depth);
    return o;
  }

  json::object MaybeObject() { return Coin(40) ? Object(2) : json::object{}; }
  std::string MaybeStr() { return Coin() ? Str() : std::string(); }
  std::vector<std::string> MaybeStrs() {
    std::vector<std::string> v;
    if (Coin(60)) return v;
    for (int i = Int(1, 3); i > 0; --i) v.push_back(Str());
    return v;
  }

  Part MakePart() {
    Part p;
    p.kind = static_cast<Part::Kind>(Int(0, 3));
    if (p.kind == Part::Kind::kData)
      p.data = Coin(70) ? json::value(Object(2)) : Value(2);
    else
      p.text = Str(30);
    p.filename = MaybeStr();
    p.media_type = MaybeStr();
    p.metadata = MaybeObject();
    return p;
  }

  std::vector<Part> Parts() {
    std::vector<Part> v;
    for (int i = Int(0, 3); i > 0; --i) v.push_back(MakePart());
    return v;
  }

  Message MakeMessage() {
    Message m;
    m.message_id = Str();
    m.context_id = MaybeStr();
    m.task_id = MaybeStr();
    m.role = static_cast<Role>(Int(0, 2));
    m.parts = Parts();
    m.metadata = MaybeObject();
    m.extensions = MaybeStrs();
    m.reference_task_ids = MaybeStrs();
    return m;
  }

  Task MakeTask() {
    Task t;
    t.id = Str();
    t.context_id = Coin(90) ? Str() : std::string();
    t.status.state = static_cast<TaskState>(Int(0, 8));
    if (Coin()) t.status.message = MakeMessage();
    if (Coin(70))
      t.status.timestamp_ms = std::uniform_int_distribution<int64_t>(
          -62135596800000, 253402300799999)(rng_);  // years 1..9999
    for (int i = Int(0, 3); i > 0; --i) {
      Artifact a;
      a.artifact_id = Str();
      a.name = MaybeStr();
      a.description = MaybeStr();
      a.parts = Parts();
      a.metadata = MaybeObject();
      a.extensions = MaybeStrs();
      t.artifacts.push_back(std::move(a));
    }
    for (int i = Int(0, 4); i > 0; --i) t.history.push_back(MakeMessage());
    t.metadata = MaybeObject();
    return t;
  }

 private:
  std::mt19937 rng_;
};

/// One stream event of each kind, made of `t`'s parts.
inline std::vector<protocol::StreamEvent> EventsOf(const Task& t) {
  std::vector<protocol::StreamEvent> events(4);
  events[0].kind = protocol::StreamEvent::Kind::kTask;
  events[0].task = t;
  events[1].kind = protocol::StreamEvent::Kind::kMessage;
  events[1].message = t.status.message.value_or(Message{});
  events[2].kind = protocol::StreamEvent::Kind::kStatusUpdate;
  events[2].status_update.task_id = t.id;
  events[2].status_update.context_id = t.context_id;
  events[2].status_update.status = t.status;
  events[2].status_update.final = protocol::IsTerminal(t.status.state);
  events[2].status_update.metadata = t.metadata;
  events[3].kind = protocol::StreamEvent::Kind::kArtifactUpdate;
  events[3].artifact_update.task_id = t.id;
  events[3].artifact_update.context_id = t.context_id;
  if (!t.artifacts.empty()) events[3].artifact_update.artifact = t.artifacts.front();
  events[3].artifact_update.append = t.history.size() % 2 == 1;
  events[3].artifact_update.last_chunk = t.artifacts.size() % 2 == 1;
  return events;
}

}  // namespace a2ad::testing

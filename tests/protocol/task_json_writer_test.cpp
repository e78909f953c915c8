// The encoder's two sinks (protocol/encode.hpp) against each other, on every wire: the text
// (AppendTask, AppendStreamEvent) must be byte-identical to boost::json::serialize of the DOM
// (TaskToJson, StreamEventToJson), except that bytes that are not UTF-8 are written as U+FFFD
// (json_text.hpp; Boost copies them): the expectation is Boost's text of the DOM with those
// bytes replaced. The shapes themselves are pinned by codec_test and proto_json_test.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "model_gen.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

using testing::ReplaceIllFormedUtf8;
using Gen = testing::ModelGen;
using testing::EventsOf;

// The DOM with every string and member name passed through ReplaceIllFormedUtf8.
json::value Replaced(const json::value& v) {
  if (v.is_string()) return json::value(ReplaceIllFormedUtf8(v.get_string()));
  if (v.is_array()) {
    json::array a;
    for (const auto& x : v.get_array()) a.push_back(Replaced(x));
    return a;
  }
  if (v.is_object()) {
    json::object o;
    for (const auto& kv : v.get_object()) o[ReplaceIllFormedUtf8(kv.key())] = Replaced(kv.value());
    return o;
  }
  return v;
}

// What Boost writes of `s`, but for the bytes that are not UTF-8.
std::string BoostString(std::string_view s) {
  return json::serialize(json::string_view(ReplaceIllFormedUtf8(s)));
}

constexpr Wire kWires[] = {Wire::kV10, Wire::kV03, Wire::kV03Proto};
const char* Named(Wire w) {
  return w == Wire::kV10 ? "v1.0" : w == Wire::kV03 ? "v0.3" : "v0.3 proto";
}

std::string Dom(const Task& t, Wire w) {
  return json::serialize(Replaced(json::value(TaskToJson(t, w))));
}
std::string Text(const Task& t, Wire w) {
  std::string s;
  AppendTask(s, t, w);
  return s;
}
std::string V10Dom(const Task& t) { return Dom(t, Wire::kV10); }
std::string V03Dom(const Task& t) { return Dom(t, Wire::kV03); }
std::string V10Text(const Task& t) { return Text(t, Wire::kV10); }
std::string V03Text(const Task& t) { return Text(t, Wire::kV03); }

void ExpectEveryWireMatches(const Task& t, const std::string& label) {
  for (Wire w : kWires) EXPECT_EQ(Text(t, w), Dom(t, w)) << Named(w) << ": " << label;
}

// The stream events a task makes (EventsOf), each in both `final` forms.
void ExpectEveryEventMatches(const Task& t, const std::string& label) {
  for (const StreamEvent& e : EventsOf(t))
    for (Wire w : kWires)
      for (Final f : {Final::kAsProjected, Final::kNotFinal}) {
        std::string text;
        AppendStreamEvent(text, e, w, f);
        EXPECT_EQ(text, json::serialize(Replaced(json::value(StreamEventToJson(e, w, f)))))
            << Named(w) << ", event " << static_cast<int>(e.kind) << ": " << label;
      }
}

// Every byte that needs care, in one string (valid UTF-8, so the text parses back).
std::string Nasty() {
  std::string s = "q\"uo\\te/slash";
  for (int c = 0; c < 0x20; ++c) s.push_back(static_cast<char>(c));
  s += "\x7f|é|日本|😀";
  return s;
}

// ---- the string escaper against the library ----------------------------------------------

TEST(JsonText, EveryByteEscapesAsBoostDoesButIllFormedUtf8) {
  for (int c = 0; c < 256; ++c) {
    for (std::string s : {std::string(1, static_cast<char>(c)),
                          "ab" + std::string(1, static_cast<char>(c)) + "cd"}) {
      std::string out;
      AppendJsonString(out, s);
      EXPECT_EQ(out, BoostString(s)) << "byte " << c;
    }
  }
  // The escaper scans eight bytes at a time: every byte at every offset of two words, on
  // a background of plain ASCII, of bytes >= 0x80 (which must not look like escapes) and of
  // UTF-8 sequences (which a word boundary may cut).
  for (std::string_view fill : {"x", "\x80", "\xff", "!", "#", "[", "]", "\x7f", "é", "日", "😀"}) {
    for (int c = 0; c < 256; ++c) {
      for (size_t at = 0; at < 19; ++at) {
        std::string s;
        while (s.size() < 19) s += fill;
        s[at] = static_cast<char>(c);
        std::string out;
        AppendJsonString(out, s);
        ASSERT_EQ(out, BoostString(s)) << "byte " << c << " at " << at << " fill " << fill;
      }
    }
  }
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  std::string out;
  AppendJsonString(out, all);
  EXPECT_EQ(out, BoostString(all));
  // Long enough to cross the library's internal chunk boundaries, escapes at every offset.
  std::string longer;
  for (int i = 0; i < 5000; ++i) longer += (i % 7 == 0) ? std::string("\x01") : std::string("x");
  out.clear();
  AppendJsonString(out, longer);
  EXPECT_EQ(out, json::serialize(json::string_view(longer)));
}

TEST(JsonText, PinnedEscapes) {
  auto esc = [](std::string_view s) {
    std::string out;
    AppendJsonString(out, s);
    return out;
  };
  EXPECT_EQ(esc(std::string_view("\0", 1)), R"("\u0000")");
  EXPECT_EQ(esc("\x1f\x1b\x0b"), R"("\u001f\u001b\u000b")");  // lowercase hex
  EXPECT_EQ(esc("\b\t\n\f\r"), R"("\b\t\n\f\r")");
  EXPECT_EQ(esc("\"\\/"), R"("\"\\/")");  // '/' is not escaped
  EXPECT_EQ(esc("\x7f"), "\"\x7f\"");
  EXPECT_EQ(esc("é日本😀"), "\"é日本😀\"");
  EXPECT_EQ(esc(""), R"("")");
}

// Unicode §3.9 "U+FFFD Substitution of Maximal Subparts" and its Tables 3-8 to 3-11: the
// writer never writes bytes that are not UTF-8 (found by tests/fuzz/event_cursor_fuzz: a
// Last-Event-ID header byte 0x80 echoed in an error message made the answer invalid JSON).
TEST(JsonText, IllFormedUtf8BecomesReplacementCharacters) {
  auto esc = [](std::string_view s) {
    std::string out;
    AppendJsonString(out, s);
    return out;
  };
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(esc("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "\"a" + r + r + r + "b" + r + "c" + r + r + "d\"");
  EXPECT_EQ(esc("\xC0\xAF\xE0\x80\xBF\xF0\x81\x82\x41"),  // non-shortest forms
            "\"" + r + r + r + r + r + r + r + r + "A\"");
  EXPECT_EQ(esc("\xED\xA0\x80\xED\xBF\xBF\xED\xAF\x41"),  // surrogates
            "\"" + r + r + r + r + r + r + r + r + "A\"");
  EXPECT_EQ(esc("\xF4\x91\x92\x93\xFF\x41\x80\xBF\x42"),  // past U+10FFFF, FF
            "\"" + r + r + r + r + r + "A" + r + r + "B\"");
  EXPECT_EQ(esc("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41"),  // truncated sequences
            "\"" + r + r + r + r + "A\"");
  EXPECT_EQ(esc("\x80\n"), "\"" + r + "\\n\"");
  EXPECT_EQ(esc("ok \xF0\x9F\x98"), "\"ok " + r + "\"");  // cut at the end
  // Well-formed sequences of every length, and the extremes of each range, stay as they are.
  for (std::string_view ok :
       {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF",
        "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"})
    EXPECT_EQ(esc(ok), "\"" + std::string(ok) + "\"");
  // Whatever the bytes, the text is JSON a strict reader accepts.
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(0xC0 + i % 64));
  EXPECT_FALSE(json::parse(esc(all)).is_null());
}

TEST(JsonText, IntsAndValuesAsBoostWritesThem) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    std::string out;
    AppendJsonInt(out, v);
    EXPECT_EQ(out, json::serialize(json::value(v)));
  }
  {  // keys are escaped like any string; ints and bools as boost writes them
    std::string out;
    JsonTextWriter w(out);
    w.Raw('{');
    w.Key(Nasty());
    w.Int(-5);
    w.Raw(',');
    w.Key("t");
    w.Bool(true);
    w.Raw(',');
    w.Key("f");
    w.Bool(false);
    w.Raw('}');
    EXPECT_EQ(out, json::serialize(json::object{{Nasty(), -5}, {"t", true}, {"f", false}}));
  }
  // A value several times the writer's chunk size, nested, so the serializer suspends.
  json::object big;
  for (int i = 0; i < 300; ++i)
    big[Nasty() + std::to_string(i)] =
        json::object{{"a", json::array{i, 1.5, -0.0, nullptr, true, Nasty()}}};
  std::string out = "prefix";
  JsonTextWriter w(out);
  w.Object(big);
  w.Raw(',');
  w.Value(json::value(big));
  w.Raw(',');
  w.Value(json::value(std::numeric_limits<uint64_t>::max()));
  EXPECT_EQ(out, "prefix" + json::serialize(big) + "," + json::serialize(big) + "," +
                     json::serialize(json::value(std::numeric_limits<uint64_t>::max())));
}

// ---- hand-picked tasks -------------------------------------------------------------------

Part MakePart(Part::Kind kind, bool extras) {
  Part p;
  p.kind = kind;
  switch (kind) {
    case Part::Kind::kText:
      p.text = "hello " + Nasty();
      break;
    case Part::Kind::kRaw:
      p.text = "aGk=";
      break;
    case Part::Kind::kUrl:
      p.text = "https://example.com/a?b=c&d=\"e\"";
      break;
    case Part::Kind::kData:
      p.data = json::object{{"k", json::array{1, 2.25, "x", nullptr, false}}, {"n", Nasty()}};
      break;
  }
  if (extras) {
    p.filename = "file \"1\".txt";
    p.media_type = "text/plain; charset=utf-8";
    p.metadata["note"] = Nasty();
    p.metadata["n"] = -7;
  }
  return p;
}

std::vector<Part> AllParts() {
  std::vector<Part> parts;
  for (auto kind : {Part::Kind::kText, Part::Kind::kRaw, Part::Kind::kUrl, Part::Kind::kData})
    for (bool extras : {false, true}) parts.push_back(MakePart(kind, extras));
  // Data that is not an object (v0.3 wraps it), and each part extra on its own.
  for (json::value v : {json::value(json::array{1, "two"}), json::value(nullptr), json::value(3.5),
                        json::value("s"), json::value(json::object{})}) {
    Part d = Part::Data(v);
    parts.push_back(d);
    d.metadata["m"] = true;
    parts.push_back(d);
  }
  Part only_name = MakePart(Part::Kind::kRaw, false);
  only_name.filename = "x.bin";
  parts.push_back(only_name);
  Part only_type = MakePart(Part::Kind::kUrl, false);
  only_type.media_type = "application/pdf";
  parts.push_back(only_type);
  Part empty_text = Part::Text("");
  parts.push_back(empty_text);
  return parts;
}

Message FullMessage() {
  Message m;
  m.message_id = "m-" + Nasty();
  m.context_id = "c1";
  m.task_id = "t1";
  m.role = Role::kAgent;
  m.parts = AllParts();
  m.metadata["skillId"] = "echo";
  m.metadata["nested"] = json::object{{"a", json::array{json::object{{"b", nullptr}}}}};
  m.extensions = {"https://example.com/ext/v1", Nasty()};
  m.reference_task_ids = {"t0", "t\"1"};
  return m;
}

std::vector<std::pair<std::string, Task>> HandPickedTasks() {
  std::vector<std::pair<std::string, Task>> out;
  out.emplace_back("default-constructed", Task{});

  Task minimal;
  minimal.id = "t1";
  minimal.context_id = "c1";
  minimal.status.state = TaskState::kSubmitted;
  out.emplace_back("minimal", minimal);

  Task ts = minimal;
  ts.status.timestamp_ms = 1767261600123;
  out.emplace_back("status timestamp", ts);

  Task old = minimal;
  old.status.timestamp_ms = -86400001;  // before 1970
  out.emplace_back("negative timestamp", old);

  Task msg = minimal;
  msg.status.message = FullMessage();
  out.emplace_back("status message, no timestamp", msg);

  Task full = minimal;
  full.id = Nasty();
  full.context_id = Nasty();
  full.status.state = TaskState::kInputRequired;
  full.status.message = FullMessage();
  full.status.timestamp_ms = 1767261600000;
  Message bare;  // every optional member empty, no parts, unspecified role
  bare.message_id = "m2";
  Message user = FullMessage();
  user.role = Role::kUser;
  user.context_id.clear();
  user.reference_task_ids.clear();
  Message only_task = bare;
  only_task.task_id = "t9";
  only_task.role = Role::kUser;
  only_task.extensions = {""};
  full.history = {FullMessage(), bare, user, only_task};
  Artifact a;
  a.artifact_id = "a1";
  a.name = "report \"final\"";
  a.description = "d\n" + Nasty();
  a.parts = AllParts();
  a.metadata["k"] = 1;
  a.metadata["big"] = std::numeric_limits<uint64_t>::max();
  a.extensions = {"e1"};
  Artifact a_bare;
  a_bare.artifact_id = "a2";
  Artifact a_desc;
  a_desc.artifact_id = "a3";
  a_desc.description = "only a description";
  a_desc.parts = {Part::Text("x")};
  full.artifacts = {a, a_bare, a_desc};
  full.metadata["openwop"] = json::object{{"runId", "t1"}, {"n", 1.0 / 3}};
  full.metadata["arr"] = json::array{json::array{}, json::object{}, -0.0, 1e300, -12, true};
  full.metadata["null"] = nullptr;
  full.metadata[Nasty()] = Nasty();
  out.emplace_back("everything", full);

  Task invalid_utf8 = minimal;  // bytes that are not UTF-8 are written as U+FFFD
  invalid_utf8.id = "\xff\x80\xc3";
  invalid_utf8.history = {bare};
  invalid_utf8.history[0].parts = {Part::Text("\xe6\x97")};
  out.emplace_back("invalid UTF-8", invalid_utf8);

  Task arts_only = minimal;
  arts_only.artifacts = {a_bare};
  out.emplace_back("artifacts without history", arts_only);

  Task hist_only = minimal;
  hist_only.history = {bare};
  out.emplace_back("history without artifacts", hist_only);

  Task md_only = minimal;
  md_only.metadata["x"] = json::object{{"y", json::array{1, 2, 3}}};
  out.emplace_back("metadata only", md_only);

  for (int s = 0; s <= 8; ++s) {
    Task st = ts;
    st.status.state = static_cast<TaskState>(s);
    out.emplace_back("state " + std::to_string(s), st);
  }
  return out;
}

TEST(TaskJsonWriter, HandPickedTasksMatchTheDom) {
  for (const auto& [label, t] : HandPickedTasks()) {
    ExpectEveryWireMatches(t, label);
    ExpectEveryEventMatches(t, label);
  }
}

TEST(TaskJsonWriter, FinalIsWrittenAsEachWireHasIt) {
  StreamEvent e;
  e.kind = StreamEvent::Kind::kStatusUpdate;
  e.status_update.task_id = "t";
  e.status_update.status.state = TaskState::kCompleted;
  e.status_update.final = true;
  auto final_of = [&](Wire w, Final f) -> json::value {
    json::object o = StreamEventToJson(e, w, f);
    const json::object& u = w == Wire::kV03 ? o : o.at("statusUpdate").as_object();
    const json::value* v = u.if_contains("final");
    return v ? *v : json::value("absent");
  };
  EXPECT_EQ(final_of(Wire::kV03, Final::kAsProjected), json::value(true));
  EXPECT_EQ(final_of(Wire::kV03, Final::kNotFinal), json::value(false));
  EXPECT_EQ(final_of(Wire::kV03Proto, Final::kAsProjected), json::value(true));
  EXPECT_EQ(final_of(Wire::kV03Proto, Final::kNotFinal), json::value("absent"));
  EXPECT_EQ(final_of(Wire::kV10, Final::kAsProjected), json::value("absent"));
}

TEST(TaskJsonWriter, EveryStateIsNamedAsTheDomNamesIt) {
  for (int s = 0; s <= 8; ++s) {
    Task t;
    t.id = "t";
    t.status.state = static_cast<TaskState>(s);
    const std::string v10 = V10Text(t);
    const std::string v03 = V03Text(t);
    EXPECT_EQ(v10, V10Dom(t));
    EXPECT_EQ(v03, V03Dom(t));
    EXPECT_NE(v10.find('"' + std::string(TaskStateName(t.status.state, Wire::kV10)) + '"'),
              std::string::npos);
    EXPECT_NE(v03.find('"' + std::string(TaskStateLabel(t.status.state)) + '"'), std::string::npos);
  }
}

TEST(TaskJsonWriter, OutputParsesBackToTheDom) {
  for (const auto& [label, t] : HandPickedTasks()) {
    if (label == "invalid UTF-8") continue;  // its strings come back with U+FFFD
    json::error_code ec;
    json::value parsed = json::parse(V10Text(t), ec);
    ASSERT_FALSE(ec) << label << ": " << ec.message();
    EXPECT_EQ(parsed, json::value(TaskToJson(t))) << label;
    parsed = json::parse(V03Text(t), ec);
    ASSERT_FALSE(ec) << label << ": " << ec.message();
    EXPECT_EQ(parsed, json::value(TaskToJson(t, Wire::kV03))) << label;
  }
}

TEST(TaskJsonWriter, AppendsWithoutClearing) {
  Task t = HandPickedTasks().back().second;
  std::string out = "{\"jsonrpc\":\"2.0\",\"result\":";
  const std::string prefix = out;
  AppendTask(out, t, Wire::kV10);
  EXPECT_EQ(out, prefix + V10Dom(t));
  out += "}|";
  AppendTask(out, t, Wire::kV03);
  EXPECT_EQ(out, prefix + V10Dom(t) + "}|" + V03Dom(t));
}

// ---- generated tasks ---------------------------------------------------------------------

TEST(TaskJsonWriter, GeneratedTasksMatchTheDom) {
  Gen gen(20260101);
  std::string all[3] = {"[", "[", "["};
  for (int i = 0; i < 200; ++i) {
    const Task t = gen.MakeTask();
    for (size_t k = 0; k < 3; ++k) {
      const Wire w = kWires[k];
      const std::string dom = Dom(t, w);
      ASSERT_EQ(Text(t, w), dom) << Named(w) << ", task " << i;
      // Appending task after task to one buffer gives the concatenation.
      AppendTask(all[k], t, w);
      EXPECT_EQ(all[k].substr(all[k].size() - dom.size()), dom);
    }
    ExpectEveryEventMatches(t, "task " + std::to_string(i));
  }
}

}  // namespace
}  // namespace a2ad::protocol

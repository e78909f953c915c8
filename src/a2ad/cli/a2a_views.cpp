#include "a2ad/cli/a2a_views.hpp"

#include <algorithm>
#include <cctype>

#include "a2ad/client/peer_card.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::cli {
namespace json = boost::json;
using protocol::ObjOr;
using protocol::Str;

namespace {

const json::object& OpenwopOf(const json::object& task) {
  return ObjOr(ObjOr(task, "metadata"), "openwop");
}

std::string FirstLine(std::string_view text, size_t max = 72) {
  std::string line(text.substr(0, text.find('\n')));
  if (line.size() > max) line = line.substr(0, max - 3) + "...";
  return line;
}

std::string StatusText(const json::object& task) {
  std::string text;
  const json::object& message = ObjOr(ObjOr(task, "status"), "message");
  if (const json::value* parts = message.if_contains("parts"); parts && parts->is_array())
    for (const auto& p : parts->get_array())
      if (p.is_object() && p.get_object().contains("text"))
        text += std::string(Str(p.get_object(), "text"));
  return text;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<int64_t> TimeOf(std::string_view iso_time) {
  int64_t ms = 0;
  if (!core::ParseTimestamp(iso_time, ms)) return std::nullopt;
  return ms;
}

}  // namespace

std::string StateLabel(const json::object& task) {
  const std::string_view paused = Str(ObjOr(ObjOr(task, "metadata"), "pause"), "state");
  if (!paused.empty()) return std::string(paused);
  return std::string(Str(task, "state"));
}

std::string Age(std::string_view iso_time, int64_t now_ms) {
  const auto at = TimeOf(iso_time);
  if (!at) return "";
  const int64_t s = std::max<int64_t>(0, (now_ms - *at) / 1000);
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  if (s < 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::optional<int64_t> SinceMs(std::string_view since, int64_t now_ms) {
  if (auto at = TimeOf(since)) return *at;
  if (since.size() < 2) return std::nullopt;
  const char unit = since.back();
  const std::string_view digits = since.substr(0, since.size() - 1);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  const int64_t n = std::stoll(std::string(digits));
  const int64_t ms = unit == 's' ? 1000 : unit == 'm' ? 60000 : unit == 'h' ? 3600000
                     : unit == 'd' ? 86400000 : 0;
  if (ms == 0) return std::nullopt;
  return now_ms - n * ms;
}

bool Matches(const json::object& task, const ListFilter& f) {
  const json::object& openwop = OpenwopOf(task);
  if (!f.all && (openwop.contains("parentRunId") || openwop.contains("callerRunId"))) return false;
  if (!f.skill.empty() && Str(openwop, "skillId") != f.skill) return false;
  if (!f.state.empty()) {
    const std::string label = StateLabel(task);
    const bool paused = label.starts_with("paused");
    if (Lower(f.state) == "paused" ? !paused
                                   : (paused || client::NormalizeState(json::value(f.state)) !=
                                                    std::string(Str(task, "state"))))
      return false;
  }
  if (f.since_ms) {
    const auto at = TimeOf(Str(ObjOr(task, "status"), "timestamp"));
    if (!at || *at < *f.since_ms) return false;
  }
  return true;
}

std::string ListLine(const json::object& task, int64_t now_ms) {
  std::string skill(Str(OpenwopOf(task), "skillId"));
  std::string line = std::string(Str(task, "id")) + "  " + StateLabel(task);
  line += "  " + (skill.empty() ? std::string("-") : skill);
  const std::string age = Age(Str(ObjOr(task, "status"), "timestamp"), now_ms);
  if (!age.empty()) line += "  " + age;
  const std::string text = StatusText(task);
  if (!text.empty()) line += "  " + FirstLine(text);
  return line;
}

std::vector<std::string> QuestionIds(const json::object& task) {
  std::vector<std::string> ids;
  const json::object& interrupt = ObjOr(OpenwopOf(task), "interrupt");
  if (Str(interrupt, "kind") != "clarification") return ids;
  if (const json::value* qs = interrupt.if_contains("questions"); qs && qs->is_array())
    for (const auto& q : qs->get_array())
      if (q.is_object() && !Str(q.get_object(), "id").empty())
        ids.emplace_back(Str(q.get_object(), "id"));
  return ids;
}

std::string InboxEntry(const json::object& item, int64_t now_ms) {
  const json::object& interrupt = ObjOr(item, "interrupt");
  std::string out = std::string(Str(item, "taskId")) + "  " + std::string(Str(item, "skill")) +
                    "  waiting " + Age(Str(item, "waitingSince"), now_ms) + "  " +
                    std::string(Str(interrupt, "kind"));
  std::string question(Str(item, "question"));
  if (question.empty()) question = Str(interrupt, "title");
  if (!question.empty()) out += "\n  " + FirstLine(question, 100);
  std::string can;
  if (const json::value* actions = interrupt.if_contains("actions"); actions && actions->is_array())
    for (const auto& a : actions->get_array())
      if (a.is_string()) can += (can.empty() ? "" : ", ") + std::string(a.get_string());
  if (const json::value* qs = interrupt.if_contains("questions"); qs && qs->is_array())
    for (const auto& q : qs->get_array())
      if (q.is_object())
        can += (can.empty() ? "" : ", ") + std::string(Str(q.get_object(), "id")) + "=?";
  if (!can.empty()) out += "\n  answer: " + can;
  return out;
}

std::string HistoryLine(const json::object& e) {
  std::string line = std::string(Str(e, "timestamp")) + "  #" +
                     (e.contains("sequence") ? protocol::SerializeJson(e.at("sequence")) : "?") +
                     "  " + std::string(Str(e, "type"));
  const json::object& p = ObjOr(e, "payload");
  std::string_view node = Str(e, "nodeId");
  if (node.empty()) node = Str(p, "nodeId");
  if (!node.empty()) line += "  " + std::string(node);
  std::string what;
  if (const json::value* err = p.if_contains("error"); err && err->is_object())
    what = std::string(Str(err->get_object(), "code")) + ": " +
           std::string(Str(err->get_object(), "message"));
  else if (!Str(p, "action").empty())
    what = "action " + std::string(Str(p, "action")) +
           (Str(p, "resolvedBy").empty() ? "" : " by " + std::string(Str(p, "resolvedBy")));
  else if (!Str(p, "kind").empty())
    what = std::string(Str(p, "kind"));
  else if (!Str(p, "reason").empty())
    what = std::string(Str(p, "reason"));
  if (!what.empty()) line += "  (" + FirstLine(what, 80) + ")";
  return line;
}

}  // namespace a2ad::cli

#include "a2ad/tasks/builtin/skill_chooser.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

constexpr const char* kNode = "a2ad.skill";
constexpr const char* kQuestion = "skillId";

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool IsTest(const SkillInfo& s) {
  return std::find(s.tags.begin(), s.tags.end(), "test") != s.tags.end();
}

// The skill an answer names: its id or name (any case, an optional leading '/'), or its
// 1-based number in the list asked; nullptr when it names none.
const SkillInfo* Named(std::string answer, const std::vector<const SkillInfo*>& choices) {
  answer = Lower(Trim(answer));
  if (answer.starts_with("/")) answer.erase(0, 1);
  if (answer.empty()) return nullptr;
  if (answer.find_first_not_of("0123456789") == std::string::npos && answer.size() < 4) {
    const size_t n = std::stoul(answer);
    return n >= 1 && n <= choices.size() ? choices[n - 1] : nullptr;
  }
  for (const SkillInfo* s : choices)
    if (Lower(s->id) == answer || (!s->name.empty() && Lower(s->name) == answer)) return s;
  return nullptr;
}

// The answer of a reply: a data part's skillId (or answers.skillId, as clarification answers
// are sent), else its text.
std::string AnswerOf(const protocol::Message& m) {
  for (const auto& p : m.parts) {
    if (p.kind != protocol::Part::Kind::kData || !p.data.is_object()) continue;
    const json::object& d = p.data.get_object();
    const json::object* scope = &d;
    if (const auto* a = d.if_contains("answers"); a && a->is_object()) scope = &a->get_object();
    for (const char* key : {kQuestion, "skill"})
      if (const auto* v = scope->if_contains(key); v && v->is_string())
        return std::string(v->get_string());
  }
  std::string text;
  for (const auto& p : m.parts)
    if (p.kind == protocol::Part::Kind::kText) text += p.text;
  return text;
}

std::string AnswerOf(const ResolveRequest& req) {
  if (req.message) return AnswerOf(*req.message);
  if (req.resume_value) {  // REST: {"skillId": ...} or the id itself
    if (req.resume_value->is_string()) return std::string(req.resume_value->get_string());
    if (req.resume_value->is_object())
      if (const auto* v = req.resume_value->get_object().if_contains(kQuestion);
          v && v->is_string())
        return std::string(v->get_string());
  }
  return "";
}

protocol::Message AgentText(std::string text) {
  protocol::Message m;
  m.message_id = "a2ad-skill-question";
  m.role = protocol::Role::kAgent;
  m.parts.push_back(protocol::Part::Text(std::move(text)));
  return m;
}

}  // namespace

std::vector<const SkillInfo*> ChoosableSkills(const std::vector<SkillInfo>& skills) {
  std::vector<const SkillInfo*> out, tests;
  for (const SkillInfo& s : skills) {
    if (!s.is_public) continue;
    (IsTest(s) ? tests : out).push_back(&s);
  }
  return out.empty() ? tests : out;
}

std::string SlashCommandSkill(const std::string& text, const std::vector<SkillInfo>& skills,
                              std::string& remainder) {
  const std::string t = Trim(text);
  if (!t.starts_with("/")) return "";
  const size_t end = t.find_first_of(" \t\r\n");
  const std::string id = t.substr(1, end == std::string::npos ? std::string::npos : end - 1);
  for (const SkillInfo& s : skills)
    if (s.id == id) {
      remainder = end == std::string::npos ? "" : Trim(t.substr(end));
      return s.id;
    }
  return "";
}

std::vector<EventDraft> SkillChooser::Ask() const {
  const auto choices = ChoosableSkills(skills_());
  std::string text =
      "This agent runs one skill per task, and your message names none. Which skill should "
      "handle it? Reply with its id, name or number:";
  json::array ids, options;
  for (size_t i = 0; i < choices.size(); ++i) {
    const SkillInfo& s = *choices[i];
    text += "\n" + std::to_string(i + 1) + ". " + s.id;
    if (!s.description.empty()) text += ": " + s.description;
    ids.emplace_back(s.id);
    options.push_back(json::object{{"value", s.id}, {"label", s.name.empty() ? s.id : s.name},
                                   {"description", s.description}});
  }
  text +=
      "\n(Next time, name it up front: message metadata.skillId, or start the text with "
      "/<skill-id>.)";
  json::object question{{"id", kQuestion},
                        {"prompt", "Which skill should handle this task?"},
                        {"required", true},
                        {"options", std::move(options)},
                        {"schema", json::object{{"type", "string"}, {"enum", std::move(ids)}}}};
  json::object interrupt{{"kind", "clarification"},
                         {"nodeId", kNode},
                         {"title", "Which skill?"},
                         {"questions", json::array{std::move(question)}}};
  EventDraft ask{protocol::kEvInputRequired,
                 kNode,
                 {{"kind", "clarification"},
                  {"interrupt", std::move(interrupt)},
                  {"message", protocol::MessageToJson(AgentText(std::move(text)))}}};
  return {std::move(ask)};
}

std::vector<EventDraft> SkillChooser::FirstSteps(const storage::TaskRecord& created) const {
  if (created.skill_id != kChooseSkill ||
      created.task.status.state != protocol::TaskState::kSubmitted)
    return {};
  return Ask();
}

core::Result<Resolution> SkillChooser::Resolve(const storage::TaskRecord& current,
                                               const ResolveRequest& req) {
  const auto choices = ChoosableSkills(skills_());
  const SkillInfo* chosen = Named(AnswerOf(req), choices);
  if (!chosen) {
    std::string list;
    for (const SkillInfo* s : choices) list += (list.empty() ? "" : ", ") + s->id;
    return Error(ErrorCode::kInvalidParams,
                 "skillId: the answer names no skill of this agent; reply with one of " + list +
                     " (or its number)",
                 {{"field", kQuestion}, {"reason", "validation_error"}});
  }
  Executor* executor = lookup_(chosen->id);
  if (!executor) return Error(ErrorCode::kInternal, "skill '" + chosen->id + "' has no executor");
  json::object inputs = current.run.inputs.value_or(json::object());
  if (auto refused = executor->CheckInputs(inputs)) return std::move(*refused);
  Resolution r;
  r.events.push_back(
      {protocol::kEvSkillChosen,
       kNode,
       {{"skillId", chosen->id},
        {"message", protocol::MessageToJson(AgentText("Running " + chosen->id + "."))}}});
  return r;
}

asio::awaitable<void> SkillChooser::Execute(std::shared_ptr<ExecutionContext> ctx) {
  // A task created without its first steps (a non-blocking send): ask now. Parked or chosen
  // otherwise (the chosen skill's executor runs it from then on).
  if (ctx->record().skill_id == kChooseSkill &&
      ctx->task().status.state == protocol::TaskState::kSubmitted)
    (void)co_await ctx->Commit(Ask());
}

}  // namespace a2ad::tasks

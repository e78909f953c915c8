#pragma once
// What a message that names no skill starts when no --default-skill is set (issue 29, 3): A2A
// has no standard skill selector, so generic clients (the SDKs' samples, chat front ends,
// other agents) send text and expect an answer. TaskService routes such a message:
//   - "/<skill-id> text..." (a slash command, as in chat apps) runs that skill on the text;
//   - when exactly one skill can be chosen, it runs;
//   - otherwise it starts a task of this executor, which asks which skill, in
//     input-required with a clarification interrupt (one question, `skillId`, whose schema
//     enumerates the choosable skills) and a status message listing them with their
//     descriptions. The answer (the skill's id, name or number as text, or a data part
//     {"skillId": ...}) turns the same task into a run of that skill: a2ad.skill.chosen sets
//     the task's skill, the run's workflowId, and the run starts from the first message's
//     inputs. An answer that names nothing choosable, or whose inputs that skill refuses, is
//     refused naming the field (-32602); the task keeps waiting.
// Choosable: the skills on the public card, less the built-in test ones (tagged "test"),
// unless those are all there is.
//
// Thread safety: stateless after construction (reads TaskService's skills, fixed once
// serving); Execute, FirstSteps and Resolve may run concurrently.
#include <functional>
#include <string>
#include <vector>

#include "a2ad/tasks/executor.hpp"

namespace a2ad::tasks {

struct SkillInfo;

/// The chooser's reserved skill id (never on a card, never named by a client).
inline constexpr const char* kChooseSkill = "a2ad.choose-skill";

/// The skills a message naming none may be routed to (see above).
std::vector<const SkillInfo*> ChoosableSkills(const std::vector<SkillInfo>& skills);

/// "/<id> rest" at the start of `text` naming one of `skills`: that skill's id, and `rest`
/// in `remainder`; "" when it names none.
std::string SlashCommandSkill(const std::string& text, const std::vector<SkillInfo>& skills,
                              std::string& remainder);

class SkillChooser final : public Executor {
 public:
  using Skills = std::function<const std::vector<SkillInfo>&()>;
  using Lookup = std::function<Executor*(const std::string& skill_id)>;
  SkillChooser(Skills skills, Lookup lookup)
      : skills_(std::move(skills)), lookup_(std::move(lookup)) {}

  std::vector<EventDraft> FirstSteps(const storage::TaskRecord& created) const override;
  core::Result<Resolution> Resolve(const storage::TaskRecord& current,
                                   const ResolveRequest& req) override;
  boost::asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override;

 private:
  std::vector<EventDraft> Ask() const;
  Skills skills_;
  Lookup lookup_;
};

}  // namespace a2ad::tasks

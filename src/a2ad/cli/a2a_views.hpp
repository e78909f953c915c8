#pragma once
// What the `a2a` CLI prints of tasks (a2a_main.cpp): the state a person reads (a paused task
// is paused, not working), ages, the task list with its filters, an approver's inbox, and a
// run's timeline. Pure functions of the JSON the agent answered, so they are tested without
// an agent (tests/client/a2a_views_test.cpp).
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace a2ad::cli {

/// The state to show: a2ad's paused tasks (metadata.pause.state: paused-by-client, ...) as
/// paused, whatever their A2A state; else the normalized state (input-required, ...).
std::string StateLabel(const boost::json::object& normalized_task);

/// "42s", "3m", "5h", "2d": how long ago `iso_time` (RFC 3339) was, from `now_ms`; "" when
/// it does not read.
std::string Age(std::string_view iso_time, int64_t now_ms);

/// --since: an RFC 3339 time, or a duration ago ("90s", "15m", "2h", "7d"); the epoch ms it
/// means, or nullopt when it reads as neither.
std::optional<int64_t> SinceMs(std::string_view since, int64_t now_ms);

/// The filters of `a2a list`. A task some run started (metadata.openwop.parentRunId or
/// callerRunId: a sub-workflow's child, a node's call to an agent) is hidden unless `all`.
struct ListFilter {
  std::string state;  // a state in either version's spelling, or "paused"; "" any
  std::string skill;  // metadata.openwop.skillId; "" any
  std::optional<int64_t> since_ms;
  bool all = false;
};
bool Matches(const boost::json::object& normalized_task, const ListFilter& filter);

/// One line of `a2a list`: id, state, skill, age, and the first line of the status message.
std::string ListLine(const boost::json::object& normalized_task, int64_t now_ms);

/// One entry of `a2a inbox` (an item of GET /v1/inbox): id, skill, age, the question, and
/// what may be answered (the approval's actions, the clarification's question ids).
std::string InboxEntry(const boost::json::object& item, int64_t now_ms);

/// One line of `a2a history` (a RunEventDoc of GET /v1/runs/{id}/events/poll): time,
/// sequence, type, node and what it says in brief.
std::string HistoryLine(const boost::json::object& event);

/// The ids of the questions a clarification interrupt asks (metadata.openwop.interrupt
/// .questions[].id), in order; empty for anything else.
std::vector<std::string> QuestionIds(const boost::json::object& normalized_task);

}  // namespace a2ad::cli

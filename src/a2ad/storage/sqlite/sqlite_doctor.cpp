#include "a2ad/storage/sqlite/sqlite_doctor.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/a2a_task_state.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"
#include "a2ad/storage/stored_records.hpp"

namespace a2ad::storage::sqlite {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr const char* kTaskColumns =
    "id, context_id, state, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run,"
    " a2a_state, COALESCE(dedup_key, '')";
constexpr const char* kEventColumns = "sequence, event_id, type, node_id, timestamp_ms, payload";

// One `tasks` row as text (the columns of kTaskColumns).
struct RawTask {
  std::string id, context_id, skill_id, snapshot, run, a2a_state, dedup_key;
  int64_t state = 0, created_at_ms = 0, updated_at_ms = 0, last_sequence = -1;
};

struct RawEvent {
  int64_t sequence = 0, timestamp_ms = 0;
  std::string event_id, type, node_id, payload;
};

RawTask ReadRawTask(const Stmt& s) {
  RawTask t;
  t.id = s.Text(0);
  t.context_id = s.Text(1);
  t.state = s.Int(2);
  t.skill_id = s.Text(3);
  t.created_at_ms = s.Int(4);
  t.updated_at_ms = s.Int(5);
  t.last_sequence = s.Int(6);
  t.snapshot = s.Text(7);
  t.run = s.Text(8);
  t.a2a_state = s.Text(9);
  t.dedup_key = s.Text(10);
  return t;
}

// Which of a row's JSON columns do not read, and why.
std::vector<std::pair<std::string, std::string>> ColumnProblems(const RawTask& t) {
  std::vector<std::pair<std::string, std::string>> out;
  auto snapshot = protocol::ParseJson(t.snapshot);
  if (!snapshot) {
    out.emplace_back("snapshot", snapshot.error().message);
  } else if (auto task = protocol::v10::TaskFromJson(*snapshot, "snapshot"); !task) {
    out.emplace_back("snapshot", task.error().message);
  } else if (task->id != t.id) {
    out.emplace_back("snapshot", "it holds task '" + task->id + "'");
  }
  for (auto [name, text] :
       {std::pair<const char*, const std::string*>{"run", &t.run}, {"a2a_state", &t.a2a_state}})
    if (auto v = protocol::ParseJsonObject(*text, name); !v)
      out.emplace_back(name, v.error().message);
  return out;
}

// Whether `s` is text our own reader accepts inside a JSON string (valid UTF-8, no lone
// surrogates encoded): the export must read back.
bool IsUtf8(const std::string& s) {
  return protocol::ParseJson(protocol::SerializeJson(json::value(json::string(s)))).ok();
}

json::value TextValue(const std::string& text) {
  if (IsUtf8(text)) return json::value(json::string(text));
  return json::object{{"base64url", core::Base64UrlEncode(text)}};
}

json::object TaskJson(const RawTask& t) {
  return json::object{{"id", TextValue(t.id)},
                      {"contextId", TextValue(t.context_id)},
                      {"state", t.state},
                      {"skillId", TextValue(t.skill_id)},
                      {"createdAtMs", t.created_at_ms},
                      {"updatedAtMs", t.updated_at_ms},
                      {"lastSequence", t.last_sequence},
                      {"snapshot", TextValue(t.snapshot)},
                      {"run", TextValue(t.run)},
                      {"a2aState", TextValue(t.a2a_state)},
                      {"dedupKey", TextValue(t.dedup_key)}};
}

json::object EventJson(const RawEvent& e) {
  return json::object{{"sequence", e.sequence},        {"eventId", TextValue(e.event_id)},
                      {"type", TextValue(e.type)},     {"nodeId", TextValue(e.node_id)},
                      {"timestampMs", e.timestamp_ms}, {"payload", TextValue(e.payload)}};
}

class Doctor {
 public:
  Doctor(Connection& db, const DoctorOptions& options) : db_(db), options_(options) {}

  Result<DoctorReport> Run() {
    if (auto r = QuickCheck(); !r) return std::move(r).error();
    if (auto r = CountQuarantined(); !r) return std::move(r).error();
    if (auto r = ScanTasks(); !r) return std::move(r).error();
    if (auto r = ScanEvents(); !r) return std::move(r).error();
    if (!options_.export_path.empty())
      if (auto r = Export(); !r) return std::move(r).error();
    if (options_.repair)
      for (const auto& id : DamagedTasks())
        if (auto r = Repair(id); !r) return std::move(r).error();
    return std::move(report_);
  }

 private:
  Result<void> QuickCheck() {
    auto p = db_.Prepare("PRAGMA quick_check(10)");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    std::string verdict;
    for (int rc = s.Step(); rc == SQLITE_ROW; rc = s.Step())
      verdict += (verdict.empty() ? "" : "; ") + std::string(s.Text(0));
    report_.integrity = verdict.empty() ? "no answer" : verdict;
    return core::Ok{};
  }

  Result<void> CountQuarantined() {
    auto p = db_.Prepare("SELECT count(*) FROM quarantined_tasks");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    if (const int rc = s.Step(); rc != SQLITE_ROW) return db_.Fail("count quarantined tasks", rc);
    report_.quarantined_before = static_cast<size_t>(s.Int(0));
    return core::Ok{};
  }

  Result<void> ScanTasks() {
    auto p = db_.Prepare(std::string("SELECT ") + kTaskColumns + " FROM tasks ORDER BY id");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    for (;;) {
      const int rc = s.Step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db_.Fail("read tasks", rc);
      ++report_.tasks_checked;
      const RawTask t = ReadRawTask(s);
      for (auto& [where, problem] : ColumnProblems(t))
        report_.damaged.push_back({t.id, where, problem});
    }
    return core::Ok{};
  }

  Result<void> ScanEvents() {
    auto p = db_.Prepare(
        "SELECT task_id, sequence, payload FROM task_events ORDER BY task_id, "
        "sequence");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    for (;;) {
      const int rc = s.Step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db_.Fail("read events", rc);
      ++report_.events_checked;
      if (auto v = DecodeEventPayload(s.Text(0), s.Int(1), s.Text(2)); !v)
        report_.damaged.push_back(
            {std::string(s.Text(0)), "event " + std::to_string(s.Int(1)),
             protocol::ParseJsonObject(s.Text(2), "payload").error().message});
    }
    return core::Ok{};
  }

  std::vector<std::string> DamagedTasks() const {
    std::set<std::string> ids;
    for (const auto& f : report_.damaged) ids.insert(f.task_id);
    return {ids.begin(), ids.end()};
  }

  Result<std::optional<RawTask>> LoadTask(const std::string& id) {
    auto p = db_.Prepare(std::string("SELECT ") + kTaskColumns + " FROM tasks WHERE id = ?1");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    s.Bind(1, id);
    const int rc = s.Step();
    if (rc == SQLITE_DONE) return std::optional<RawTask>();
    if (rc != SQLITE_ROW) return db_.Fail("read task", rc);
    return std::optional<RawTask>(ReadRawTask(s));
  }

  Result<std::vector<RawEvent>> LoadEvents(const std::string& id) {
    auto p = db_.Prepare(std::string("SELECT ") + kEventColumns +
                         " FROM task_events WHERE task_id = ?1 ORDER BY sequence");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    s.Bind(1, id);
    std::vector<RawEvent> out;
    for (int rc = s.Step();; rc = s.Step()) {
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db_.Fail("read events", rc);
      RawEvent e;
      e.sequence = s.Int(0);
      e.event_id = s.Text(1);
      e.type = s.Text(2);
      e.node_id = s.Text(3);
      e.timestamp_ms = s.Int(4);
      e.payload = s.Text(5);
      out.push_back(std::move(e));
    }
    return out;
  }

  Result<void> Export() {
    std::ofstream out(options_.export_path, std::ios::trunc);
    if (!out) return Error(ErrorCode::kInvalidParams, "cannot write " + options_.export_path);
    for (const auto& id : DamagedTasks()) {
      auto task = LoadTask(id);
      if (!task) return std::move(task).error();
      auto events = LoadEvents(id);
      if (!events) return std::move(events).error();
      json::array problems, evs;
      for (const auto& f : report_.damaged)
        if (f.task_id == id)
          problems.push_back(json::object{{"where", f.where}, {"problem", TextValue(f.problem)}});
      for (const auto& e : *events) evs.push_back(EventJson(e));
      json::object line{{"kind", "damaged"}, {"taskId", TextValue(id)}, {"problems", problems}};
      if (*task) line["task"] = TaskJson(**task);
      line["events"] = std::move(evs);
      out << protocol::SerializeJson(line) << "\n";
      ++report_.exported;
    }
    auto p =
        db_.Prepare("SELECT task_id, quarantined_at_ms, problem, record FROM quarantined_tasks");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    for (int rc = s.Step(); rc == SQLITE_ROW; rc = s.Step()) {
      json::object line{{"kind", "set-aside"},
                        {"taskId", TextValue(std::string(s.Text(0)))},
                        {"quarantinedAtMs", s.Int(1)},
                        {"problem", TextValue(std::string(s.Text(2)))},
                        {"record", TextValue(std::string(s.Text(3)))}};
      out << protocol::SerializeJson(line) << "\n";
      ++report_.exported;
    }
    if (!out.flush())
      return Error(ErrorCode::kInternal, "write " + options_.export_path + " failed");
    return core::Ok{};
  }

  Result<void> Exec(const char* sql, std::string_view what) { return db_.Exec(sql, what); }

  Result<void> UpdateColumns(const RawTask& t) {
    auto p = db_.Prepare(
        "UPDATE tasks SET context_id = ?2, state = ?3, updated_at_ms = ?4, snapshot = ?5,"
        " run = ?6, a2a_state = ?7 WHERE id = ?1");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    s.Bind(1, t.id);
    s.Bind(2, t.context_id);
    s.Bind(3, t.state);
    s.Bind(4, t.updated_at_ms);
    s.Bind(5, t.snapshot);
    s.Bind(6, t.run);
    s.Bind(7, t.a2a_state);
    if (const int rc = s.Step(); rc != SQLITE_DONE) return db_.Fail("repair task", rc);
    return core::Ok{};
  }

  Result<void> UpdatePayload(const std::string& id, const RawEvent& e) {
    auto p =
        db_.Prepare("UPDATE task_events SET payload = ?3 WHERE task_id = ?1 AND sequence = ?2");
    if (!p) return std::move(p).error();
    Stmt s(*p);
    s.Bind(1, id);
    s.Bind(2, e.sequence);
    s.Bind(3, e.payload);
    if (const int rc = s.Step(); rc != SQLITE_DONE) return db_.Fail("repair event", rc);
    return core::Ok{};
  }

  // Copies the task's row, events and push configs into quarantined_tasks and removes them.
  Result<void> SetAside(const RawTask& t, const std::vector<RawEvent>& events,
                        const std::string& problem) {
    json::array evs;
    for (const auto& e : events) evs.push_back(EventJson(e));
    json::object record{{"task", TaskJson(t)}, {"events", std::move(evs)}};
    auto p = db_.Prepare(
        "INSERT INTO quarantined_tasks(task_id, quarantined_at_ms, problem, record)"
        " VALUES (?1, ?2, ?3, ?4)");
    if (!p) return std::move(p).error();
    {
      Stmt s(*p);
      s.Bind(1, t.id);
      s.Bind(2, std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count());
      s.Bind(3, problem);
      s.Bind(4, protocol::SerializeJson(record));
      if (const int rc = s.Step(); rc != SQLITE_DONE) return db_.Fail("set task aside", rc);
    }
    auto del = db_.Prepare("DELETE FROM tasks WHERE id = ?1");  // events, push configs cascade
    if (!del) return std::move(del).error();
    Stmt d(*del);
    d.Bind(1, t.id);
    if (const int rc = d.Step(); rc != SQLITE_DONE) return db_.Fail("remove task", rc);
    return core::Ok{};
  }

  Result<void> Repair(const std::string& id) {
    auto loaded = LoadTask(id);
    if (!loaded) return std::move(loaded).error();
    if (!*loaded) return core::Ok{};
    RawTask t = std::move(**loaded);
    auto events_read = LoadEvents(id);
    if (!events_read) return std::move(events_read).error();
    std::vector<RawEvent> events = std::move(events_read).value();

    // 1. Bare Infinity/NaN tokens become null wherever they are.
    std::vector<std::string> replaced_in;
    for (auto [name, text] : {std::pair<const char*, std::string*>{"snapshot", &t.snapshot},
                              {"run", &t.run},
                              {"a2a_state", &t.a2a_state}})
      if (auto fixed = ReplaceNonJsonNumbers(*text)) {
        *text = std::move(*fixed);
        replaced_in.push_back(name);
      }
    std::vector<size_t> fixed_events;
    bool events_read_ok = true;
    for (size_t i = 0; i < events.size(); ++i) {
      if (DecodeEventPayload(id, events[i].sequence, events[i].payload)) continue;
      if (auto fixed = ReplaceNonJsonNumbers(events[i].payload)) {
        events[i].payload = std::move(*fixed);
        fixed_events.push_back(i);
        replaced_in.push_back("event " + std::to_string(events[i].sequence));
      }
      if (!DecodeEventPayload(id, events[i].sequence, events[i].payload)) events_read_ok = false;
    }
    std::string how;
    if (!replaced_in.empty()) {
      how = "Infinity/NaN replaced with null in";
      for (const auto& w : replaced_in) how += " " + w;
    }

    // 2. A snapshot that still does not read is the fold of a complete, readable log.
    auto problems = ColumnProblems(t);
    if (!problems.empty() && events_read_ok && options_.refold) {
      bool complete = !events.empty() && static_cast<int64_t>(events.size()) == t.last_sequence + 1;
      for (size_t i = 0; complete && i < events.size(); ++i)
        complete = events[i].sequence == static_cast<int64_t>(i);
      if (complete) {
        std::vector<protocol::RunEvent> log;
        for (const auto& e : events) {
          protocol::RunEvent r;
          r.run_id = id;
          r.sequence = e.sequence;
          r.event_id = e.event_id;
          r.type = e.type;
          r.node_id = e.node_id;
          r.timestamp_ms = e.timestamp_ms;
          r.payload = DecodeEventPayload(id, e.sequence, e.payload).value();
          log.push_back(std::move(r));
        }
        auto folded = options_.refold(log);
        if (folded && folded->task.id == id && folded->last_sequence == t.last_sequence) {
          t.context_id = folded->task.context_id;
          t.state = static_cast<int64_t>(folded->task.status.state);
          t.updated_at_ms = folded->updated_at_ms;
          t.snapshot.clear();
          protocol::AppendTask(t.snapshot, folded->task, protocol::Wire::kV10);
          t.run.clear();
          protocol::JsonTextWriter run(t.run);
          protocol::WriteRunSnapshot(run, folded->run);
          t.a2a_state.clear();
          protocol::JsonTextWriter a2a_state(t.a2a_state);
          protocol::WriteA2ATaskState(a2a_state, folded->task, folded->run);
          problems = ColumnProblems(t);
          if (problems.empty())
            how += std::string(how.empty() ? "" : "; ") + "rebuilt from its event log (" +
                   std::to_string(log.size()) + " events)";
        }
      }
    }

    if (auto r = Exec("BEGIN IMMEDIATE", "begin repair"); !r) return r;
    Result<void> written = core::Ok{};
    if (problems.empty()) {
      written = UpdateColumns(t);
      for (size_t i : fixed_events)
        if (written) written = UpdatePayload(id, events[i]);
      if (written) {
        if (events_read_ok)
          report_.repaired.push_back("task " + id + ": " + how);
        else
          report_.unrepaired.push_back("task " + id +
                                       ": an event of its log does not read; the task itself "
                                       "reads (streams that replay that event fail)");
      }
    } else {
      std::string why;
      for (const auto& [where, problem] : problems) why += where + ": " + problem + "; ";
      written = SetAside(t, events, why);
      if (written) report_.set_aside.push_back(id);
    }
    if (!written) {
      (void)Exec("ROLLBACK", "roll back repair");
      return written;
    }
    return Exec("COMMIT", "commit repair");
  }

  Connection& db_;
  const DoctorOptions& options_;
  DoctorReport report_;
};

}  // namespace

std::optional<std::string> ReplaceNonJsonNumbers(std::string_view text) {
  std::string out;
  bool replaced = false;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      continue;
    }
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, token.size()) == token) {
        out.append("null");
        i += token.size() - 1;
        replaced = true;
        goto next;
      }
    }
    out.push_back(c);
  next:;
  }
  if (!replaced) return std::nullopt;
  return out;
}

Result<DoctorReport> RunDoctor(const std::string& db_path, const DoctorOptions& options) {
  if (!std::filesystem::exists(db_path))
    return Error(ErrorCode::kInvalidParams,
                 "no database at " + db_path + " (is --data-dir the server's data directory?)");
  const int flags = options.repair ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  auto opened = Connection::Open(db_path, flags, 5000);
  if (!opened) return std::move(opened).error();
  Connection& db = **opened;
  auto version = CurrentVersion(db);
  if (!version)
    return Error(ErrorCode::kInternal, db_path + " cannot be read as an a2ad database (" +
                                           version.error().message + "); restore it from a backup");
  if (*version != LatestVersion())
    return Error(ErrorCode::kInvalidParams,
                 db_path + " has schema version " + std::to_string(*version) + "; this a2ad uses " +
                     std::to_string(LatestVersion()) + ": run `a2ad migrate` first");
  if (auto fk = db.Exec("PRAGMA foreign_keys=ON", "enable foreign keys"); !fk)
    return std::move(fk).error();
  return Doctor(db, options).Run();
}

}  // namespace a2ad::storage::sqlite

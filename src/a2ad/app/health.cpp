#include "a2ad/app/health.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <mutex>
#include <optional>

#include "a2ad/tasks/signal.hpp"

namespace a2ad::app {
namespace asio = boost::asio;
namespace json = boost::json;

std::string DatabaseAdvice(const core::Error& e, const std::string& data_dir) {
  const std::string_view rc = e.Detail("sqlite");
  const std::string db = data_dir + "/a2ad.db";
  if (rc == "8" || rc == "14" || rc == "3" || rc == "23")  // READONLY, CANTOPEN, PERM, AUTH
    return "a2ad cannot write " + db +
           ": make the data directory and its files writable by the user a2ad runs as (ls -l " +
           data_dir + "), or start it with another --data-dir";
  if (rc == "11" || rc == "26")  // CORRUPT, NOTADB
    return db +
           " is not a readable a2ad database (damaged, or not an SQLite file). To start afresh, "
           "move a2ad.db (and a2ad.db-wal, a2ad.db-shm) out of " +
           data_dir +
           "; to get the tasks back, restore a backup made with `a2ad backup` (docs/REFERENCE.md, "
           "\"Backup and restore\"); `a2ad doctor` checks the records of a database that opens";
  if (rc == "13")  // FULL
    return "the disk that holds " + data_dir + " is full: free space, then start a2ad again";
  if (rc == "10")  // IOERR
    return "the disk that holds " + data_dir + " answered with an I/O error: check it (dmesg)";
  return "";
}

namespace {

struct Probe {
  std::mutex mu;
  std::optional<core::Result<void>> result;
  tasks::Signal done;
};

json::object Check(bool ok, const std::string& detail = {}) {
  json::object c;
  c["ok"] = ok;
  if (!detail.empty()) c["detail"] = detail;
  return c;
}

asio::awaitable<std::pair<bool, json::object>> Ready(storage::Backend* db,
                                                     const HealthState* state,
                                                     std::string data_dir) {
  auto probe = std::make_shared<Probe>();
  db->CheckWritable([probe](core::Result<void> r) {
    {
      std::lock_guard lock(probe->mu);
      probe->result = std::move(r);
    }
    probe->done.Fire();
  });
  auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                    std::chrono::seconds(2));
  timer->async_wait([probe](boost::system::error_code) { probe->done.Fire(); });
  co_await probe->done.Wait();
  timer->cancel();
  std::optional<core::Result<void>> result;
  {
    std::lock_guard lock(probe->mu);
    result = probe->result;
  }
  json::object checks;
  bool ready = true;
  if (!result) {
    checks["database"] = Check(false, "no write within 2 s: the store's writer is stuck or slow");
    ready = false;
  } else if (!*result) {
    std::string advice = DatabaseAdvice(result->error(), data_dir);
    checks["database"] =
        Check(false, advice.empty() ? "the database cannot be written right now" : advice);
    ready = false;
  } else {
    checks["database"] = Check(true);
  }
  const bool recovered = state->recovered.load();
  checks["recovery"] =
      Check(recovered, recovered ? "" : "still re-driving the runs of before the restart");
  ready = ready && recovered;
  const size_t refused = state->workflows_refused.load();
  json::object workflows =
      Check(refused == 0, refused == 0 ? "" : std::to_string(refused) +
                                                  " workflow file(s) refused at load (the log "
                                                  "says which and why; `a2ad validate`)");
  workflows["loaded"] = state->workflows_loaded.load();
  workflows["refused"] = refused;
  checks["workflows"] = std::move(workflows);
  ready = ready && refused == 0;
  co_return std::make_pair(ready, std::move(checks));
}

}  // namespace

transport::Router::ReadinessProbe MakeReadinessProbe(storage::Backend& db,
                                                     const HealthState& state,
                                                     std::string data_dir) {
  return [db = &db, state = &state, dir = std::move(data_dir)] { return Ready(db, state, dir); };
}

}  // namespace a2ad::app

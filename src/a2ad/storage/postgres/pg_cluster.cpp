// See pg_cluster.hpp.
#include "a2ad/storage/postgres/pg_cluster.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <random>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/postgres/pg_connection.hpp"

namespace a2ad::storage {

namespace {
// A holder is dead once its registration expired, or once the same replica id registered
// again after it (the earlier process of a restarted replica; a newer one is never dead); "" holds
// the leases of runs that were going before migration 3. The dead holders are read from `replicas`
// (a few rows), their leases by the holder index. The liveness test is a sub-select, not a join: a
// lease another replica claims meanwhile is re-checked (READ COMMITTED re-evaluates the WHERE on
// the row's newest version) with its new holder, who is alive.
constexpr const char* kClaimOrphans =
    "WITH orphan AS ("
    " SELECT l.task_id, l.holder FROM run_leases l WHERE l.holder <> $1"
    " AND (l.holder = '' OR l.holder IN (SELECT r.holder FROM replicas r"
    "   WHERE r.expires_at < clock_timestamp() OR (r.replica_id = $2 AND r.started_at <"
    "     (SELECT me.started_at FROM replicas me WHERE me.holder = $1))))"
    " LIMIT $3 FOR UPDATE SKIP LOCKED)"
    " UPDATE run_leases l SET holder = $1, epoch = l.epoch + 1 FROM orphan o"
    " WHERE l.task_id = o.task_id RETURNING l.task_id, l.epoch, o.holder";
// A lease nobody alive holds: the same test as kClaimOrphans's, plus a holder never
// registered (a process that died before its first heartbeat).
constexpr const char* kClaimIdle =
    "INSERT INTO run_leases(task_id, holder, epoch) VALUES ($1, $2, 1) ON CONFLICT (task_id)"
    " DO UPDATE SET holder = excluded.holder, epoch = run_leases.epoch + 1"
    " WHERE run_leases.holder = '' OR run_leases.holder NOT IN (SELECT r.holder FROM replicas r"
    "   WHERE r.expires_at >= clock_timestamp() AND NOT (r.replica_id = $3 AND r.started_at <"
    "     (SELECT me.started_at FROM replicas me WHERE me.holder = $2)))"
    " RETURNING epoch";
constexpr int kConnectTimeoutStatementMs = 5000;
}  // namespace

PgCluster::PgCluster(std::string url, ClusterOptions options, std::string holder)
    : url_(std::move(url)), options_(std::move(options)), holder_(std::move(holder)) {}

PgCluster::~PgCluster() { Stop(); }

std::string PgCluster::MakeHolder(const std::string& replica_id) {
  std::random_device rd;
  char nonce[16];
  std::snprintf(nonce, sizeof nonce, "%08x", static_cast<unsigned>(rd()));
  return replica_id + "/" + nonce;
}

core::Result<pg::Rows> PgCluster::Exec(const char* sql, const pg::Params& params,
                                       const char* what) {
  std::lock_guard lock(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!conn_ || conn_->Broken()) {
      conn_.reset();
      auto c = pg::Connection::Open(url_, kConnectTimeoutStatementMs);
      if (!c) return std::move(c).error();
      conn_ = std::move(c).value();
    }
    auto r = conn_->Exec(sql, params, what);
    if (r || !conn_->Broken()) return r;
  }
  return core::Error(core::ErrorCode::kUnavailable, "the database is unavailable",
                     {{"database", "postgresql"}});
}

core::Result<void> PgCluster::Heartbeat() {
  auto r = Exec(
      "INSERT INTO replicas(holder, replica_id, started_at, expires_at)"
      " VALUES ($1, $2, clock_timestamp(), clock_timestamp() + $3::bigint * interval '1 ms')"
      " ON CONFLICT (holder) DO UPDATE SET expires_at = excluded.expires_at",
      pg::Params().Add(holder_).Add(options_.replica_id).Add(
          static_cast<int64_t>(options_.lease_ttl.count())),
      "renew this replica's registration");
  if (!r) return std::move(r).error();
  // Registrations dead for a day that hold nothing are forgotten.
  (void)Exec(
      "DELETE FROM replicas WHERE expires_at < clock_timestamp() - interval '1 day'"
      " AND NOT EXISTS (SELECT 1 FROM run_leases l WHERE l.holder = replicas.holder)",
      pg::Params(), "forget old registrations");
  return core::Ok{};
}

core::Result<int64_t> PgCluster::Acquire(const std::string& task_id) {
  auto r = Exec(
      "INSERT INTO run_leases(task_id, holder, epoch) VALUES ($1, $2, 1) ON CONFLICT (task_id)"
      " DO UPDATE SET holder = excluded.holder, epoch = run_leases.epoch + 1 RETURNING epoch",
      pg::Params().Add(task_id).Add(holder_), "take a run's lease");
  if (!r) return std::move(r).error();
  return r->Int(0, 0);
}

core::Result<bool> PgCluster::Holds(const std::string& task_id, int64_t epoch) {
  auto r = Exec("SELECT 1 FROM run_leases WHERE task_id = $1 AND holder = $2 AND epoch = $3",
                pg::Params().Add(task_id).Add(holder_).Add(epoch), "check a run's lease");
  if (!r) return std::move(r).error();
  return r->size() > 0;
}

core::Result<std::optional<int64_t>> PgCluster::ClaimIdle(const std::string& task_id) {
  auto r = Exec(kClaimIdle, pg::Params().Add(task_id).Add(holder_).Add(options_.replica_id),
                "claim an idle run");
  if (!r) return std::move(r).error();
  if (r->size() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(r->Int(0, 0));
}

core::Result<std::vector<Cluster::Claimed>> PgCluster::ClaimOrphans(size_t limit) {
  auto r = Exec(kClaimOrphans,
                pg::Params().Add(holder_).Add(options_.replica_id).Add(static_cast<int64_t>(limit)),
                "claim orphaned runs");
  if (!r) return std::move(r).error();
  std::vector<Claimed> out;
  for (int i = 0; i < r->size(); ++i)
    out.push_back({std::string(r->Text(i, 0)), r->Int(i, 1), std::string(r->Text(i, 2))});
  return out;
}

core::Result<void> PgCluster::Release(const std::string& task_id, int64_t epoch) {
  auto r = Exec("DELETE FROM run_leases WHERE task_id = $1 AND holder = $2 AND epoch = $3",
                pg::Params().Add(task_id).Add(holder_).Add(epoch), "give a lease up");
  if (!r) return std::move(r).error();
  return core::Ok{};
}

core::Result<void> PgCluster::Abandon(const std::string& task_id, int64_t epoch) {
  auto r =
      Exec("UPDATE run_leases SET holder = '' WHERE task_id = $1 AND holder = $2 AND epoch = $3",
           pg::Params().Add(task_id).Add(holder_).Add(epoch), "give a run up");
  if (!r) return std::move(r).error();
  return core::Ok{};
}

core::Result<void> PgCluster::Leave() {
  auto r = Exec("UPDATE replicas SET expires_at = '-infinity' WHERE holder = $1",
                pg::Params().Add(holder_), "leave");
  if (!r) return std::move(r).error();
  return core::Ok{};
}

core::Result<int64_t> PgCluster::AdoptUnleased() {
  // Safe against a commit in flight: a creating commit writes its task and its lease in one
  // transaction, so a task without a lease was made by a build without leases.
  auto r = Exec(
      "INSERT INTO run_leases(task_id, holder, epoch) SELECT t.id, '', 1 FROM tasks t"
      " WHERE t.state NOT IN (3, 4, 5, 7)"
      " AND NOT EXISTS (SELECT 1 FROM run_leases l WHERE l.task_id = t.id)"
      " ON CONFLICT DO NOTHING",
      pg::Params(), "lease unleased runs");
  if (!r) return std::move(r).error();
  return r->Affected();
}

core::Result<int64_t> PgCluster::LeasesHeld() {
  auto r = Exec("SELECT count(*) FROM run_leases WHERE holder = $1", pg::Params().Add(holder_),
                "count the leases held");
  if (!r) return std::move(r).error();
  return r->Int(0, 0);
}

void PgCluster::Listen(Feed feed, std::chrono::milliseconds resync_every) {
  feed_ = std::thread([this, feed = std::move(feed), resync_every] {
    core::SetThreadName("a2ad-feed");
    FeedLoop(feed, resync_every);
  });
}

// A feed line "~<task id>\t<key>" (the writing holder's own feed skips it: "@<holder>").
core::Result<void> PgCluster::Nudge(const std::string& task_id, const std::string& key) {
  auto r = Exec("SELECT pg_notify('a2ad_feed', $1)",
                pg::Params().Add("@" + holder_ + "\n~" + task_id + "\t" + key), "hand a nudge on");
  if (!r) return std::move(r).error();
  return core::Ok{};
}

void PgCluster::Stop() {
  stop_ = true;
  if (feed_.joinable()) feed_.join();
}

void PgCluster::FeedLoop(const Feed& feed, std::chrono::milliseconds resync_every) {
  using Clock = std::chrono::steady_clock;
  bool warned = false;
  while (!stop_) {
    auto opened = pg::Connection::Open(url_, 0);
    if (!opened || !(*opened)->Run("LISTEN a2ad_feed", "listen to the change feed")) {
      if (!warned)
        core::LogWarn("change feed: cannot listen (" +
                      (opened ? std::string("LISTEN failed") : opened.error().message) +
                      "); trying again every 500 ms");
      warned = true;
      for (int i = 0; i < 5 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (warned) core::LogInfo("change feed: listening again");
    warned = false;
    std::unique_ptr<pg::Connection> conn = std::move(opened).value();
    PGconn* c = conn->handle();
    feed.on_resync();  // whatever was committed while nobody listened
    auto last_resync = Clock::now();
    while (!stop_) {
      pollfd fd{PQsocket(c), POLLIN, 0};
      const int ready = ::poll(&fd, 1, 200);  // 200 ms: how soon Stop is seen
      if (ready > 0) {
        if (!PQconsumeInput(c)) break;  // lost: listen again
        while (PGnotify* n = PQnotifies(c)) {
          std::string_view payload(n->extra);
          if (!payload.empty() && payload.front() == '@') {  // "@<holder>\n": whose commits
            const size_t end = payload.find('\n');
            const bool own = payload.substr(1, end == std::string_view::npos ? end : end - 1) == holder_;
            payload = own || end == std::string_view::npos ? std::string_view() : payload.substr(end + 1);
          }
          while (!payload.empty()) {
            const size_t end = payload.find('\n');
            std::string_view line = payload.substr(0, end);
            payload = end == std::string_view::npos ? std::string_view() : payload.substr(end + 1);
            if (line.empty()) continue;
            if (line == "*") {  // a change beside every task (a webhook): read all again
              feed.on_resync();
              continue;
            }
            if (line.front() == '~') {  // a nudge: "~<task id>\t<key>"
              const size_t tab = line.find('\t');
              if (tab != std::string_view::npos && feed.on_nudge)
                feed.on_nudge(std::string(line.substr(1, tab - 1)),
                              std::string(line.substr(tab + 1)));
              continue;
            }
            const size_t space = line.rfind(' ');
            int64_t seq = 0;
            if (space == std::string_view::npos ||
                std::from_chars(line.data() + space + 1, line.data() + line.size(), seq).ec !=
                    std::errc())
              continue;
            feed.on_commit(std::string(line.substr(0, space)), seq);
          }
          PQfreemem(n);
        }
      } else if (ready < 0 && errno != EINTR) {
        break;
      }
      if (PQstatus(c) != CONNECTION_OK) break;
      if (Clock::now() - last_resync >= resync_every) {
        feed.on_resync();
        last_resync = Clock::now();
      }
    }
    if (!stop_) core::LogWarn("change feed: the listening connection was lost; listening again");
  }
}

}  // namespace a2ad::storage

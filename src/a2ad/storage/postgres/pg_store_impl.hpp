#pragma once
// Internal to storage_postgres: PostgresStore's state, shared by its source files
// (pg_writer.cpp: commits and the commit participant; pg_store.cpp: reads, the pool, open and
// close; pg_push.cpp: push; pg_component_jobs.cpp: extensions' writes, reads and migrations).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/storage/postgres/pg_connection.hpp"
#include "a2ad/storage/postgres/postgres_store.hpp"
#include "a2ad/storage/server_keys.hpp"

namespace a2ad::storage {

class PostgresStore::Impl {
 public:
  Impl(std::string url, PostgresOptions opts) : url_(std::move(url)), opts_(std::move(opts)) {}

  // ---- the reader pool (pg_store.cpp) ----
  class Lease {  // a borrowed connection, given back on destruction
   public:
    Lease(Impl& impl, std::unique_ptr<pg::Connection> c) : impl_(&impl), c_(std::move(c)) {}
    Lease(Lease&& o) noexcept = default;
    ~Lease();
    pg::Connection& operator*() { return *c_; }
    pg::Connection* operator->() { return c_.get(); }
    /// The connection is closed instead of given back.
    void Drop();

   private:
    Impl* impl_;
    std::unique_ptr<pg::Connection> c_;
  };
  core::Result<Lease> Borrow();
  /// Runs `f(connection)`; once more on a new connection if the first was lost.
  template <class F>
  auto WithReader(F&& f) -> decltype(f(std::declval<pg::Connection&>())) {
    for (int attempt = 0;; ++attempt) {
      auto lease = Borrow();
      if (!lease) return std::move(lease).error();
      auto r = f(**lease);
      if (!r) {
        errors_.fetch_add(1);
        if ((*lease)->Broken() && attempt == 0) continue;
      }
      return r;
    }
  }
  void CloseReaders();
  /// A read task row (the columns of GetTaskSql) as Get answers it.
  static core::Result<std::optional<TaskRecord>> OneTask(core::Result<pg::Rows> rows);
  static const std::string& GetTaskSql();  // the task with id $1

  // ---- queued gets (pg_gets.cpp; TaskStore::QueueGet) ----
  // One thread takes every queued get (up to kMaxBatch), sends them in one pipeline on a
  // borrowed reader connection and hands each answer to its callback as it is read: under load
  // one round trip and one thread wake-up serve many gets, where Get costs a reader thread's
  // two (its job, the server's answer) per read. A get whose connection failed is asked again
  // alone on a new connection (WithReader), so a lost connection costs a retry, as Get's does.
  class GetQueue {
   public:
    static constexpr size_t kMaxBatch = 32;  // its statements stay well under a socket buffer
    explicit GetQueue(Impl& impl) : impl_(impl) {}
    ~GetQueue() { Stop(); }
    /// Queues one get (the thread starts with the first). After Stop(): `done` gets
    /// kUnavailable at once.
    void Push(std::string task_id, GetCallback done);
    /// Answers what is queued, then ends the thread. Idempotent.
    void Stop();

   private:
    struct Item {
      std::string task_id;
      GetCallback done;
    };
    void Loop();
    void Answer(std::vector<Item>& batch);

    Impl& impl_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Item> queue_;  // under mu_
    bool stopping_ = false;   // under mu_
    std::thread thread_;      // started under mu_
  };
  GetQueue gets_{*this};

  // ---- the writer (pg_writer.cpp) ----
  struct Pending {
    TaskCommit commit;  // its record is Record()
    CommitCallback done;
    core::Result<void> result = core::Ok{};  // the precondition check, then the outcome
    std::string snapshot, run, a2a_state;
    std::vector<std::string> payloads;  // one per event
  };
  struct Job {  // runs on the writer thread after every commit queued before it
    std::function<void(pg::Connection*)> run;
  };
  void Commit(TaskCommit commit, CommitCallback done);
  /// Runs `job` on the writer thread once every commit queued before it is settled; the
  /// connection is null if the writer cannot connect. false after Close().
  bool Enqueue(std::function<void(pg::Connection*)> job);
  void StartWriter();
  void StopWriter();  // drains the queue, joins the thread
  void SetCommitParticipant(CommitParticipant participant);

  class ApiKeys final : public ApiKeyStore {  // pg_api_keys.cpp
   public:
    explicit ApiKeys(Impl& impl) : impl_(impl) {}
    core::Result<void> Insert(const ApiKeyRecord& record) override;
    core::Result<std::optional<ApiKeyRecord>> Find(std::string_view key_id) override;
    core::Result<std::vector<ApiKeyRecord>> List() override;
    core::Result<bool> Revoke(std::string_view key_id, int64_t now_ms) override;
    core::Result<bool> Any() override;

   private:
    Impl& impl_;
  };

  class Keys final : public ServerKeys {  // pg_server_keys.cpp
   public:
    explicit Keys(Impl& impl) : impl_(impl) {}
    core::Result<std::string> Secret(
        const std::string& name, const std::function<core::Result<std::string>()>& make) override;
    std::unique_ptr<KeyRing> Ring(const std::string& name) override;

   private:
    Impl& impl_;
  };

  const std::string url_;
  const PostgresOptions opts_;
  ApiKeys api_keys_{*this};
  Keys keys_{*this};
  std::atomic<uint64_t> errors_{0};

 private:
  void WriterLoop();
  void RunBatch(std::vector<Pending>& batch);
  bool EnsureWriter();
  /// Writes one commit; `aborted` is set when a statement failed (the transaction is then
  /// unusable), as opposed to a refused commit (kConflict, nothing written).
  core::Result<void> Apply(Pending& p, bool& aborted);
  /// The fast pass of RunBatch: the batch in one pipeline. kWritten: every commit written, the
  /// transaction open; kCareful: something was refused or failed, rolled back; kFailed: the
  /// connection failed (`error`).
  struct Pipelined {
    enum Outcome { kWritten, kCareful, kFailed } outcome;
    core::Result<void> error;
  };
  Pipelined Pipeline(std::vector<Pending>& batch, const std::vector<core::Result<void>>& checked);
  /// The commit participant's look at the commits of `batch` that were written, before COMMIT,
  /// in a savepoint of the batch's transaction.
  /// Calls the participant inside a savepoint (taken here unless `savepoint_taken`); returns
  /// what must run before the COMMIT (the savepoint's release, or "").
  std::string TellParticipant(std::vector<Pending>& batch,
                              const std::vector<core::Result<void>>& checked, bool savepoint_taken);

  // Readers.
  mutable std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<pg::Connection>> idle_;
  size_t open_ = 0;  // connections made and not dropped (idle or lent)
  bool pool_closed_ = false;
  uint64_t waits_ = 0;
  friend class PostgresStore;

  // Writer.
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::variant<Pending, Job>> queue_;
  bool stopping_ = false;
  std::thread writer_thread_;
  std::unique_ptr<pg::Connection> writer_;
  CommitParticipant participant_;  // set under queue_mu_ before serving; used by the writer
};

}  // namespace a2ad::storage

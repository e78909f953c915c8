#pragma once
// Internal to storage_postgres: one libpq connection, the statements run on it, and what its
// errors mean. libpq-fe.h stays out of the backend's public header.
//
// Statements are sent with text parameters and read back as text (values are ids, JSON text
// and 64-bit integers: the text forms are what the columns hold). A statement given by its
// text alone (Exec) is prepared on first use on each connection and run by name afterwards.
//
// Errors (Fail): the SQLSTATE decides the code (ErrorFor below); the message names what was
// being done, the SQLSTATE and the server's primary message, never the connection string, a
// host, a user or a value (libpq's connection messages are cut to their reason: Redact).
//
// Thread safety: a Connection is used by one thread at a time.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace a2ad::storage::pg {

/// The parameters of one statement, as text ($1, $2, ... in order).
class Params {
 public:
  Params& Add(std::string_view text);
  Params& Add(int64_t value);
  Params& Add(bool value) { return Add(std::string_view(value ? "t" : "f")); }
  Params& Add(const char* text) { return Add(std::string_view(text)); }
  Params& Add(const std::string& text) { return Add(std::string_view(text)); }
  /// An empty text as NULL (optional keys are NULL in the database, "" in a record).
  Params& AddOrNull(std::string_view text);
  Params& Null();
  int size() const { return static_cast<int>(values_.size()); }
  /// A parameter holds a NUL character, which PostgreSQL text cannot: the statement is not
  /// sent (kInvalidParams), rather than cut at the NUL.
  bool has_nul() const { return has_nul_; }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }

 private:
  std::vector<std::unique_ptr<std::string>> owned_;  // stable addresses
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  bool has_nul_ = false;
};

/// The rows of one statement (owns the PGresult).
class Rows {
 public:
  Rows() = default;
  explicit Rows(PGresult* r);
  Rows(Rows&& o) noexcept;
  Rows& operator=(Rows&& o) noexcept;
  ~Rows();
  int size() const;
  int columns() const;
  std::string_view Text(int row, int col) const;
  int64_t Int(int row, int col) const;
  bool IsNull(int row, int col) const;
  /// Rows an INSERT, UPDATE or DELETE touched.
  int64_t Affected() const;
  /// The command tag's first word: "SELECT", "INSERT", "UPDATE", ...
  std::string_view Command() const;

 private:
  PGresult* r_ = nullptr;
};

/// The error code a SQLSTATE means: 23505 (unique) kConflict; connection failures (08*),
/// statement timeout and cancellation (57014), shutdown (57P*), serialization failures and
/// deadlocks (40001, 40P01), too many connections (53300) kUnavailable; a text the server
/// cannot store (22021, 22P05: a NUL byte, not UTF-8) and an over-long value (54000)
/// kInvalidParams; anything else kInternal.
core::ErrorCode ErrorFor(std::string_view sqlstate);

/// libpq's message cut to what went wrong: the first line, after its last "failed: ", with
/// every quoted name replaced by "…" (hosts, users, databases).
std::string Redact(std::string_view libpq_message);

class Connection {
 public:
  /// Connects to `url` (a libpq URI or keyword string; libpq's PG* environment variables
  /// fill in what it leaves out). statement_timeout_ms > 0 sets the session's
  /// statement_timeout. Connecting gives up after the URL's connect_timeout, else
  /// PGCONNECT_TIMEOUT, else kDefaultConnectTimeoutS seconds. kUnavailable (redacted) if the
  /// server cannot be reached or refuses; kInvalidParams if the string does not parse.
  static constexpr int kDefaultConnectTimeoutS = 5;
  static core::Result<std::unique_ptr<Connection>> Open(const std::string& url,
                                                        int statement_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs `sql` (prepared on first use on this connection) with `params`.
  core::Result<Rows> Exec(std::string_view sql, const Params& params, std::string_view what);
  /// Runs `sql` once, unprepared (statements whose text varies: several rows at once).
  core::Result<Rows> ExecOnce(const std::string& sql, const Params& params,
                              std::string_view what);
  /// Runs one or more statements without parameters (BEGIN, COMMIT, DDL).
  core::Result<void> Run(std::string_view sql, std::string_view what);
  // ---- pipeline mode (libpq 14+): statements sent without waiting for each answer, their
  // results read in order afterwards; one round trip for many statements. Only small results
  // are expected (command tags), so sending everything before reading cannot fill both
  // directions' buffers. After an error the statements that follow it in the pipeline are not
  // run (their results say so), until the sync.
  /// Prepares `sql` now (outside a pipeline) if this connection has not yet.
  core::Result<void> Prepare(std::string_view sql, int params, std::string_view what);
  core::Result<void> EnterPipeline();
  /// Queues `sql` (prepared by Prepare, or once unprepared) with `params`. kInvalidParams for a
  /// NUL in a parameter (nothing is queued); kUnavailable if the connection fails.
  core::Result<void> Send(std::string_view sql, const Params& params, bool prepared,
                          std::string_view what);
  /// Marks the end of the queued statements and sends them.
  core::Result<void> Sync();
  /// The result of the next queued statement, in order (an error for one that failed or was
  /// skipped after a failure).
  core::Result<Rows> Next(std::string_view what);
  /// Reads up to the sync's result and leaves pipeline mode; false if the connection is
  /// unusable afterwards.
  bool ExitPipeline();
  /// Whether the connection is lost (it is then dropped by its owner and a new one made).
  bool Broken() const;
  /// Whether a statement of the open transaction failed: it then accepts nothing but ROLLBACK
  /// (to a savepoint), and a COMMIT would roll it back without an error.
  bool InFailedTransaction() const;
  PGconn* handle() { return conn_; }

 private:
  explicit Connection(PGconn* conn) : conn_(conn) {}
  core::Result<Rows> Check(PGresult* r, std::string_view what);

  PGconn* conn_;
  std::map<std::string, std::string, std::less<>> prepared_;  // sql -> statement name
};

/// Whether `url` names a PostgreSQL database: a postgres:// or postgresql:// URI, or a libpq
/// keyword string ("host=... dbname=...").
bool IsPostgresUrl(std::string_view url);

/// Checks that `url` parses as libpq connection options (nothing is contacted);
/// kInvalidParams with libpq's reason otherwise.
core::Result<void> CheckUrl(const std::string& url);

}  // namespace a2ad::storage::pg

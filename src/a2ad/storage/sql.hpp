#pragma once
// A store-neutral SQL handle (issue 30): what an extension that keeps its own tables in the
// task store's database (a *component*, schema_migrations.hpp; the OPT extension's objectives)
// runs its statements through, whichever engine holds them (backend.hpp: Backend::Write, Read
// and the commit participant).
//
// One statement text serves every engine: parameters are written $1, $2, ... (PostgreSQL takes
// them natively; SQLite takes each as the named parameter "$k", so one may be used twice), and
// the SQL is what both dialects accept (INSERT ... ON CONFLICT, LIMIT $n, integers for
// booleans, no engine's own functions). Only the DDL differs per engine (ComponentMigrations).
// Every statement's parameters are exactly $1..$n of its text: a value the text does not use
// is an error on every engine (PostgreSQL cannot type a parameter it never sees), so a
// statement that runs on one runs on the other. Statements are prepared once per connection
// and cached by their text.
//
// Values are NULL, 64-bit integers or text, sent as text: PostgreSQL gives a parameter the type
// its first use implies (the column it is compared with or stored in), so a parameter is first
// used where that type is plain (`n = $1`, then `$1 + 1` if need be; not `$1 + $1` alone). A
// column is read back as text or as an integer (its decimal text). Rows are copied out of the
// engine whole, so they outlive the statement.
//
// Thread safety: a Tx is used by the thread that was given it, for the duration of the call it
// was given to; Rows are plain values.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::storage {
namespace sql {

/// NULL (std::monostate: a default Value), an integer or a text.
using Value = std::variant<std::monostate, int64_t, std::string>;
using Params = std::vector<Value>;

/// `text` as a Value, NULL when it is empty (an absent optional key).
inline Value TextOrNull(std::string_view text) {
  return text.empty() ? Value() : Value(std::string(text));
}

/// The rows of one statement, copied out of the engine, and the rows it changed.
class Rows {
 public:
  explicit Rows(int columns = 0) : columns_(columns) {}
  int size() const { return columns_ == 0 ? 0 : static_cast<int>(cells_.size()) / columns_; }
  int columns() const { return columns_; }
  /// The cell's text ("" for NULL); valid as long as this Rows.
  std::string_view Text(int row, int col) const;
  /// The cell as a decimal integer (0 for NULL or text that is not one).
  int64_t Int(int row, int col) const;
  bool IsNull(int row, int col) const { return cells_[Index(row, col)].null; }
  /// Rows an INSERT, UPDATE or DELETE inserted, changed or deleted (0 for a query).
  int64_t Affected() const { return affected_; }

  // ---- filled by the engines ----
  /// Appends the next cell (rows are filled left to right, top to bottom); nullptr: NULL.
  void Add(const char* data, size_t size);
  void AddNull();
  void SetAffected(int64_t n) { affected_ = n; }

 private:
  struct Cell {
    size_t offset = 0;
    size_t size = 0;
    bool null = false;
  };
  size_t Index(int row, int col) const { return static_cast<size_t>(row) * columns_ + col; }

  int columns_ = 0;
  std::string text_;  // every cell's text, back to back
  std::vector<Cell> cells_;
  int64_t affected_ = 0;
};

/// One transaction of the engine that runs the caller's statements.
class Tx {
 public:
  virtual ~Tx() = default;
  /// Runs one statement with $1..$n bound to `params` (in order). Errors are the engine's:
  /// kInternal naming the statement and the engine's message; on PostgreSQL a unique violation
  /// is kConflict and a lost connection kUnavailable (pg_connection.hpp). After an error the
  /// transaction is to be rolled back (or to a savepoint taken before the statement): on
  /// PostgreSQL it accepts nothing else.
  virtual core::Result<Rows> Exec(std::string_view sql, const Params& params = {}) = 0;
};

/// What a component runs in one transaction; an error rolls it back.
using Job = std::function<core::Result<void>(Tx&)>;

}  // namespace sql

/// What a commit participant is told of one task commit (the views live for the call only).
struct CommittedTask {
  std::string_view id, context_id, tenant, owner;
  std::string_view snapshot;  // the task after the commit, A2A 1.0 JSON
  int64_t state = 0;          // protocol::TaskState
  int64_t at_ms = 0;          // the commit's change time (TaskRecord::updated_at_ms)
  bool created = false;       // the commit creates the task
};

/// Rows of a component that follow tasks (the OPT extension's plan tasks). `before_commit` is
/// called on the store's writer thread once per batch of task commits, inside its transaction,
/// after every commit of it is written and before COMMIT, with the commits that were written
/// (not those refused or rolled back): its writes commit or roll back with theirs. It cannot
/// fail the batch: it logs what it cannot do and keeps its writes in savepoints of its own, so
/// that a failure undoes them. Where a failed statement spoils the transaction (PostgreSQL),
/// the store also keeps the whole call in a savepoint, rolled back to (and logged) when the call
/// throws or leaves the transaction spoiled. A batch written twice (a commit of it failed halfway)
/// is shown once, in the pass that reaches COMMIT. `after_batch` is called on the writer thread
/// once the batch is settled, with whether its transaction committed: what `before_commit` wrote
/// may now be acted upon, or must be forgotten. Neither may block. Set once, before serving.
struct CommitParticipant {
  std::function<void(sql::Tx&, const std::vector<CommittedTask>&)> before_commit;
  std::function<void(bool committed)> after_batch;
};

}  // namespace a2ad::storage

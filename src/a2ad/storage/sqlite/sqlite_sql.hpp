#pragma once
// Internal to storage_sqlite: sql::Tx (storage/sql.hpp) on a connection that is in a
// transaction already (the writer's, or a pooled reader's read transaction). Statements are
// the connection's cached ones (Connection::Prepare); each "$k" of a statement's text is the
// named parameter "$k" of SQLite, bound to params[k - 1], so a parameter may be used twice.
//
// Thread safety: as the connection (one thread at a time).
#include "a2ad/storage/sql.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"

namespace a2ad::storage::sqlite {

class SqlTx final : public sql::Tx {
 public:
  explicit SqlTx(Connection& db) : db_(db) {}
  /// kInvalidParams when the text uses a parameter that is not $1..$n of `params`, or leaves
  /// one of them unused; kInternal (Connection::Fail) when SQLite refuses the statement.
  core::Result<sql::Rows> Exec(std::string_view sql, const sql::Params& params = {}) override;

 private:
  Connection& db_;
};

}  // namespace a2ad::storage::sqlite

#pragma once
// Internal to storage_postgres: sql::Tx (storage/sql.hpp) on a connection that is in a
// transaction already (the writer's, or a pooled reader's read-only one). Statements are the
// connection's prepared ones (Connection::Exec: prepared on first use, by their text); their
// rows are copied into sql::Rows.
//
// Thread safety: as the connection (one thread at a time).
#include "a2ad/storage/postgres/pg_connection.hpp"
#include "a2ad/storage/sql.hpp"

namespace a2ad::storage::pg {

class SqlTx final : public sql::Tx {
 public:
  explicit SqlTx(Connection& db) : db_(db) {}
  /// Connection::Exec's errors (a text holding a NUL: kInvalidParams); a parameter the text
  /// does not use, or one it uses that is not given, is PostgreSQL's error (kInternal).
  core::Result<sql::Rows> Exec(std::string_view sql, const sql::Params& params = {}) override;

 private:
  Connection& db_;
};

}  // namespace a2ad::storage::pg

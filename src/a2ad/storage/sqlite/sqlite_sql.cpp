// See sqlite_sql.hpp.
#include "a2ad/storage/sqlite/sqlite_sql.hpp"

#include <charconv>
#include <string>
#include <vector>

namespace a2ad::storage::sqlite {
namespace {

// The statement for messages: its first line, cut (never a value: those are parameters).
std::string Named(std::string_view sql) {
  std::string_view head = sql.substr(0, sql.find('\n'));
  if (head.size() > 80) return std::string(head.substr(0, 80)) + "...";
  return std::string(head);
}

core::Error BadParams(std::string_view sql, const std::string& why) {
  return core::Error(core::ErrorCode::kInvalidParams,
                     "sqlite: statement '" + Named(sql) + "': " + why);
}

}  // namespace

core::Result<sql::Rows> SqlTx::Exec(std::string_view sql, const sql::Params& params) {
  auto prepared = db_.Prepare(sql);
  if (!prepared) return std::move(prepared).error();
  sqlite3_stmt* stmt = *prepared;
  Stmt s(stmt);  // resets and clears the cached statement afterwards
  std::vector<bool> used(params.size(), false);
  const int count = sqlite3_bind_parameter_count(stmt);
  for (int i = 1; i <= count; ++i) {
    // "$k": its index is SQLite's (the order of first use), its value params[k - 1].
    const char* name = sqlite3_bind_parameter_name(stmt, i);
    const std::string_view n = name ? name : "";
    size_t k = 0;
    if (n.size() < 2 || n[0] != '$' ||
        std::from_chars(n.data() + 1, n.data() + n.size(), k).ptr != n.data() + n.size() || k < 1 ||
        k > params.size())
      return BadParams(sql, "parameter '" + std::string(n) + "' is not one of $1..$" +
                                std::to_string(params.size()));
    used[k - 1] = true;
    const sql::Value& v = params[k - 1];
    if (const auto* integer = std::get_if<int64_t>(&v))
      s.Bind(i, *integer);
    else if (const auto* text = std::get_if<std::string>(&v))
      s.BindStatic(i, *text);  // `params` outlives `s`
    else
      s.BindNull(i);
  }
  for (size_t k = 0; k < used.size(); ++k)
    if (!used[k]) return BadParams(sql, "parameter $" + std::to_string(k + 1) + " is not used");
  const int columns = sqlite3_column_count(stmt);
  sql::Rows rows(columns);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    for (int c = 0; c < columns; ++c) {
      if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
        rows.AddNull();
        continue;
      }
      const std::string_view text = s.Text(c);  // an integer as its decimal text
      rows.Add(text.data() ? text.data() : "", text.size());
    }
  }
  if (rc != SQLITE_DONE) return db_.Fail("statement '" + Named(sql) + "'", rc);
  if (!sqlite3_stmt_readonly(stmt)) rows.SetAffected(sqlite3_changes(db_.handle()));
  return rows;
}

}  // namespace a2ad::storage::sqlite

// See pg_sql.hpp.
#include "a2ad/storage/postgres/pg_sql.hpp"

#include <string>

namespace a2ad::storage::pg {

core::Result<sql::Rows> SqlTx::Exec(std::string_view sql, const sql::Params& params) {
  Params p;
  for (const sql::Value& v : params) {
    if (const auto* integer = std::get_if<int64_t>(&v))
      p.Add(*integer);
    else if (const auto* text = std::get_if<std::string>(&v))
      p.Add(*text);
    else
      p.Null();
  }
  // The statement for messages: its first line, cut (never a value: those are parameters).
  std::string_view head = sql.substr(0, sql.find('\n'));
  const std::string what =
      "statement '" + std::string(head.substr(0, 80)) + (head.size() > 80 ? "...'" : "'");
  auto got = db_.Exec(sql, p, what);
  if (!got) return std::move(got).error();
  const int columns = got->columns();
  sql::Rows rows(columns);
  for (int r = 0; r < got->size(); ++r)
    for (int c = 0; c < columns; ++c) {
      if (got->IsNull(r, c)) {
        rows.AddNull();
      } else {
        const std::string_view t = got->Text(r, c);
        rows.Add(t.data(), t.size());
      }
    }
  // PostgreSQL counts the rows a SELECT returned too: they are not rows it changed.
  if (got->Command() != "SELECT") rows.SetAffected(got->Affected());
  return rows;
}

}  // namespace a2ad::storage::pg

// See pg_connection.hpp.
#include "a2ad/storage/postgres/pg_connection.hpp"

#include <libpq-fe.h>

#include <charconv>
#include <cstdlib>
#include <utility>

namespace a2ad::storage::pg {

Params& Params::Add(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) has_nul_ = true;
  owned_.push_back(std::make_unique<std::string>(text));
  values_.push_back(owned_.back()->c_str());
  lengths_.push_back(static_cast<int>(text.size()));
  return *this;
}

Params& Params::Add(int64_t value) { return Add(std::string_view(std::to_string(value))); }

Params& Params::AddOrNull(std::string_view text) { return text.empty() ? Null() : Add(text); }

Params& Params::Null() {
  values_.push_back(nullptr);
  lengths_.push_back(0);
  return *this;
}

Rows::Rows(PGresult* r) : r_(r) {}
Rows::Rows(Rows&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
Rows& Rows::operator=(Rows&& o) noexcept {
  if (this != &o) {
    if (r_) PQclear(r_);
    r_ = std::exchange(o.r_, nullptr);
  }
  return *this;
}
Rows::~Rows() {
  if (r_) PQclear(r_);
}
int Rows::size() const { return r_ ? PQntuples(r_) : 0; }
int Rows::columns() const { return r_ ? PQnfields(r_) : 0; }
std::string_view Rows::Text(int row, int col) const {
  return {PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col))};
}
int64_t Rows::Int(int row, int col) const {
  std::string_view t = Text(row, col);
  int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}
bool Rows::IsNull(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
int64_t Rows::Affected() const {
  const char* n = r_ ? PQcmdTuples(r_) : "";
  int64_t v = 0;
  std::from_chars(n, n + std::char_traits<char>::length(n), v);
  return v;
}

std::string_view Rows::Command() const {
  std::string_view tag = r_ ? PQcmdStatus(r_) : "";
  return tag.substr(0, tag.find(' '));
}

core::ErrorCode ErrorFor(std::string_view s) {
  using core::ErrorCode;
  if (s == "23505") return ErrorCode::kConflict;
  if (s.starts_with("08") || s == "57014" || s.starts_with("57P") || s == "40001" ||
      s == "40P01" || s == "53300" || s.empty())
    return ErrorCode::kUnavailable;
  if (s == "22021" || s == "22P05" || s == "54000") return ErrorCode::kInvalidParams;
  return ErrorCode::kInternal;
}

std::string Redact(std::string_view m) {
  if (auto nl = m.find('\n'); nl != std::string_view::npos) {
    // "connection to server ... failed: reason\n\tIs the server running..." and the like:
    // the reason, when a later line carries it, is found by "failed: " below.
    std::string_view first = m.substr(0, nl);
    if (first.find("failed: ") == std::string_view::npos && m.find("failed: ") != std::string_view::npos)
      first = m.substr(0, m.find('\n', m.find("failed: ")));
    m = first;
  }
  if (auto f = m.rfind("failed: "); f != std::string_view::npos) m = m.substr(f + 8);
  std::string out;
  bool quoted = false;
  for (char c : m) {
    if (c == '"') {
      if (!quoted) out += "\"…\"";
      quoted = !quoted;
    } else if (!quoted) {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out.empty() ? "no reason given" : out;
}

bool IsPostgresUrl(std::string_view url) {
  return url.starts_with("postgresql://") || url.starts_with("postgres://") ||
         (url.find("://") == std::string_view::npos && url.find('=') != std::string_view::npos);
}

core::Result<void> CheckUrl(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    std::string why = err ? Redact(err) : "out of memory";
    if (err) PQfreemem(err);
    return core::Error(core::ErrorCode::kInvalidParams, "the database URL does not parse: " + why);
  }
  PQconninfoFree(opts);
  return core::Ok{};
}

core::Result<std::unique_ptr<Connection>> Connection::Open(const std::string& url,
                                                           int statement_timeout_ms) {
  if (auto ok = CheckUrl(url); !ok) return std::move(ok).error();
  // libpq waits for a connection as long as the kernel does (minutes for a host that drops
  // packets) unless told otherwise; the store's pool, the lease heartbeat and the change feed
  // would all stall behind it. A default goes first, so the URL's own connect_timeout (expanded
  // from dbname after it) wins, and PGCONNECT_TIMEOUT is left to libpq when it is set.
  const bool env_timeout = std::getenv("PGCONNECT_TIMEOUT") != nullptr;
  const std::string default_timeout = std::to_string(kDefaultConnectTimeoutS);
  const char* keys[] = {"connect_timeout", "dbname", nullptr};
  const char* values[] = {default_timeout.c_str(), url.c_str(), nullptr};
  PGconn* c = PQconnectdbParams(keys + (env_timeout ? 1 : 0), values + (env_timeout ? 1 : 0),
                                /*expand_dbname=*/1);
  if (!c) return core::Error(core::ErrorCode::kUnavailable, "cannot connect to PostgreSQL: out of memory");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string why = Redact(PQerrorMessage(c));
    PQfinish(c);
    return core::Error(core::ErrorCode::kUnavailable, "cannot connect to PostgreSQL: " + why,
                       {{"database", "postgresql"}});
  }
  std::unique_ptr<Connection> conn(new Connection(c));
  // Text is UTF-8 both ways, whatever the client environment says; times are not used.
  std::string setup = "SET client_encoding = 'UTF8'";
  if (statement_timeout_ms > 0)
    setup += "; SET statement_timeout = " + std::to_string(statement_timeout_ms);
  if (auto ok = conn->Run(setup, "configure the session"); !ok) return std::move(ok).error();
  return conn;
}

Connection::~Connection() { PQfinish(conn_); }

bool Connection::Broken() const { return PQstatus(conn_) != CONNECTION_OK; }

bool Connection::InFailedTransaction() const {
  return PQtransactionStatus(conn_) == PQTRANS_INERROR;
}

core::Result<Rows> Connection::Check(PGresult* r, std::string_view what) {
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Rows(r);
  std::string state, message;
  if (r) {
    if (const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE)) state = s;
    if (const char* p = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) message = p;
    PQclear(r);
  }
  if (message.empty()) message = Redact(PQerrorMessage(conn_));
  if (Broken()) state.clear();  // the connection is gone: unavailable whatever was said
  core::Error e(ErrorFor(state), std::string(what) + ": PostgreSQL " +
                                     (state.empty() ? std::string("connection") : state) + ": " +
                                     message);
  if (!state.empty()) e.details.emplace_back("sqlstate", state);
  e.details.emplace_back("database", "postgresql");  // transport/error_body.cpp keeps it in the log
  return e;
}

namespace {
core::Error NulError(std::string_view what) {
  return core::Error(core::ErrorCode::kInvalidParams,
                     std::string(what) + ": a value holds a NUL character, which PostgreSQL "
                                         "text cannot store",
                     {{"database", "postgresql"}});
}
}  // namespace

core::Result<Rows> Connection::Exec(std::string_view sql, const Params& params,
                                    std::string_view what) {
  if (params.has_nul()) return NulError(what);
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = "a2ad_" + std::to_string(prepared_.size());
    std::string text(sql);
    auto made = Check(PQprepare(conn_, name.c_str(), text.c_str(), params.size(), nullptr), what);
    if (!made) return std::move(made).error();
    it = prepared_.emplace(std::move(text), std::move(name)).first;
  }
  return Check(PQexecPrepared(conn_, it->second.c_str(), params.size(), params.values(),
                              params.lengths(), nullptr, 0),
               what);
}

core::Result<void> Connection::Prepare(std::string_view sql, int params, std::string_view what) {
  if (prepared_.find(sql) != prepared_.end()) return core::Ok{};
  std::string name = "a2ad_" + std::to_string(prepared_.size());
  std::string text(sql);
  auto made = Check(PQprepare(conn_, name.c_str(), text.c_str(), params, nullptr), what);
  if (!made) return std::move(made).error();
  prepared_.emplace(std::move(text), std::move(name));
  return core::Ok{};
}

namespace {
core::Error Lost(std::string_view what, PGconn* c) {
  return core::Error(core::ErrorCode::kUnavailable,
                     std::string(what) + ": PostgreSQL connection: " + Redact(PQerrorMessage(c)),
                     {{"database", "postgresql"}});
}
}  // namespace

core::Result<void> Connection::EnterPipeline() {
  if (PQenterPipelineMode(conn_) != 1) return Lost("enter pipeline mode", conn_);
  return core::Ok{};
}

core::Result<void> Connection::Send(std::string_view sql, const Params& params, bool prepared,
                                    std::string_view what) {
  if (params.has_nul()) return NulError(what);
  int sent;
  if (prepared) {
    auto it = prepared_.find(sql);
    if (it == prepared_.end())
      return core::Error(core::ErrorCode::kInternal, std::string(what) + ": not prepared");
    sent = PQsendQueryPrepared(conn_, it->second.c_str(), params.size(), params.values(),
                               params.lengths(), nullptr, 0);
  } else {
    const std::string text(sql);
    sent = PQsendQueryParams(conn_, text.c_str(), params.size(), nullptr, params.values(),
                             params.lengths(), nullptr, 0);
  }
  if (sent != 1) return Lost(what, conn_);
  return core::Ok{};
}

core::Result<void> Connection::Sync() {
  if (PQpipelineSync(conn_) != 1) return Lost("send a pipeline", conn_);
  return core::Ok{};
}

core::Result<Rows> Connection::Next(std::string_view what) {
  PGresult* r = PQgetResult(conn_);
  if (!r) return Lost(what, conn_);
  if (PQresultStatus(r) == PGRES_PIPELINE_ABORTED) {
    PQclear(r);
    (void)PQgetResult(conn_);  // the statement's end
    return core::Error(core::ErrorCode::kInternal,
                       std::string(what) + ": not run (an earlier statement failed)",
                       {{"database", "postgresql"}});
  }
  auto out = Check(r, what);
  if (PGresult* end = PQgetResult(conn_)) PQclear(end);  // the statement's end (NULL)
  return out;
}

bool Connection::ExitPipeline() {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    if (PQpipelineStatus(conn_) == PQ_PIPELINE_OFF) return true;
    if (PQexitPipelineMode(conn_) == 1) return true;
    PGresult* r = PQgetResult(conn_);
    if (!r) {
      if (Broken()) return false;
      continue;
    }
    PQclear(r);
  }
  return false;
}

core::Result<Rows> Connection::ExecOnce(const std::string& sql, const Params& params,
                                        std::string_view what) {
  if (params.has_nul()) return NulError(what);
  return Check(PQexecParams(conn_, sql.c_str(), params.size(), nullptr, params.values(),
                            params.lengths(), nullptr, 0),
               what);
}

core::Result<void> Connection::Run(std::string_view sql, std::string_view what) {
  auto r = Check(PQexec(conn_, std::string(sql).c_str()), what);
  if (!r) return std::move(r).error();
  return core::Ok{};
}

}  // namespace a2ad::storage::pg

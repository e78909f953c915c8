// FreshPgDatabase (pg_cluster.hpp): each call is a database of its own on a cluster that
// answers, including calls from several threads at once.
#include "pg_cluster.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace a2ad::test {
namespace {

using PgConn = std::unique_ptr<PGconn, decltype(&PQfinish)>;
using PgResult = std::unique_ptr<PGresult, decltype(&PQclear)>;

PgConn Connect(const std::string& url) {
  PgConn conn(PQconnectdb(url.c_str()), &PQfinish);
  EXPECT_EQ(PQstatus(conn.get()), CONNECTION_OK) << url << ": " << PQerrorMessage(conn.get());
  return conn;
}

// The one value of a one-row, one-column query (empty on an error, which fails the test).
std::string Scalar(PGconn* conn, const char* sql) {
  PgResult res(PQexec(conn, sql), &PQclear);
  EXPECT_EQ(PQresultStatus(res.get()), PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(conn);
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK || PQntuples(res.get()) != 1) return "";
  return PQgetvalue(res.get(), 0, 0);
}

void Command(PGconn* conn, const char* sql) {
  PgResult res(PQexec(conn, sql), &PQclear);
  EXPECT_EQ(PQresultStatus(res.get()), PGRES_COMMAND_OK) << sql << ": " << PQerrorMessage(conn);
}

TEST(PgCluster, EachCallIsANewEmptyDatabaseWhereRowsRoundTrip) {
  const std::string first = FreshPgDatabase();
  const std::string second = FreshPgDatabase();
  EXPECT_NE(first, second);

  const PgConn a = Connect(first);
  const PgConn b = Connect(second);
  ASSERT_EQ(PQstatus(a.get()), CONNECTION_OK);
  ASSERT_EQ(PQstatus(b.get()), CONNECTION_OK);
  EXPECT_NE(Scalar(a.get(), "SELECT current_database()"), Scalar(b.get(), "SELECT current_database()"));
  EXPECT_EQ(Scalar(a.get(), "SHOW server_encoding"), "UTF8");

  for (PGconn* conn : {a.get(), b.get()}) {
    EXPECT_EQ(Scalar(conn, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), "0");
  }
  Command(a.get(), "CREATE TABLE t(x int)");
  Command(a.get(), "INSERT INTO t VALUES (1), (2), (39)");
  EXPECT_EQ(Scalar(a.get(), "SELECT sum(x) FROM t"), "42");
  // The other database has no such table.
  EXPECT_EQ(Scalar(b.get(), "SELECT count(*) FROM pg_tables WHERE tablename = 't'"), "0");
  Command(b.get(), "CREATE TABLE t(x int)");
  Command(b.get(), "INSERT INTO t VALUES (7)");
  EXPECT_EQ(Scalar(b.get(), "SELECT sum(x) FROM t"), "7");
  EXPECT_EQ(Scalar(a.get(), "SELECT sum(x) FROM t"), "42");
}

TEST(PgCluster, CallsFromSeveralThreadsAtOnceEachGetTheirOwnDatabase) {
  constexpr int kThreads = 6;
  std::vector<std::string> urls(kThreads);
  std::vector<std::string> errors(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        try {
          urls[i] = FreshPgDatabase();
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    }
  }
  for (const auto& e : errors) ASSERT_EQ(e, "");
  std::set<std::string> names;
  for (const auto& url : urls) {
    const PgConn conn = Connect(url);
    names.insert(Scalar(conn.get(), "SELECT current_database()"));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kThreads));
}

}  // namespace
}  // namespace a2ad::test

#pragma once
// PostgreSQL for the tests: one throwaway cluster per test process (scripts/pg-scratch.sh), a
// new empty database per call. Link a2ad_test_pg (tests/support/CMakeLists.txt; DEPS test_pg in
// a2ad_test), which also brings libpq.
#include <string>

namespace a2ad::test {

/// A libpq URL of a new, empty database on the throwaway cluster of this test process
/// (CREATE DATABASE with a unique name per call). The cluster is started on the first call
/// by scripts/pg-scratch.sh under a temp dir and stopped (and removed) when the process exits.
/// If the environment variable A2AD_TEST_PG_URL is set (a URL of an existing server whose user
/// may create databases), that server is used instead and nothing is started.
///
/// Throws std::runtime_error (with the script's stderr, or libpq's message) when there is no
/// PostgreSQL to be had: a test that needs one fails, it never skips. Thread-safe.
///
/// The cluster: /tmp/a2ad-pg.XXXXXX, superuser a2ad (trust), 127.0.0.1 at a free port, fsync
/// off. Should the process be killed before it can stop it, a watchdog started with it stops it
/// within a second or two, and the next test process removes whatever was still left over.
/// The databases made on an A2AD_TEST_PG_URL server are dropped at exit (WITH (FORCE)).
std::string FreshPgDatabase();

/// One statement on the database at `url`, in a session of its own; its first value ("" for
/// none). A connection or statement that fails is a test failure (ADD_FAILURE), not a throw.
std::string PgQuery(const std::string& url, const std::string& sql);

}  // namespace a2ad::test

namespace a2ad::testing {
using test::FreshPgDatabase;  // where the other test helpers live
}  // namespace a2ad::testing

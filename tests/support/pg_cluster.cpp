#include "pg_cluster.hpp"

#include <gtest/gtest.h>

#include "http_client.hpp"

#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

extern char** environ;

namespace a2ad::test {
namespace {

namespace fs = std::filesystem;

const char* const kScript = A2AD_SOURCE_DIR "/scripts/pg-scratch.sh";
constexpr const char* kDirPrefix = "a2ad-pg.";

struct ScriptRun {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

// Runs `bash scripts/pg-scratch.sh ARGS...` with `extra_env` added to the environment and
// returns its exit code, stdout and stderr. The child gets no descriptor of ours beyond its
// own stdio: neither the script nor the server and watchdog it leaves behind may hold a pipe
// or socket of the test process open.
ScriptRun RunScript(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}) {
  const char* bash = ::access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/usr/bin/bash";
  std::vector<std::string> argv_text{"bash", kScript};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text(extra_env);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::system_error(e, std::generic_category(), "pipe2");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw std::system_error(e, std::generic_category(), "fork");
  }
  if (pid == 0) {  // only async-signal-safe calls from here to execve
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out_pipe[1], 1) < 0 || ::dup2(err_pipe[1], 2) < 0) {
      ::_exit(127);
    }
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    ::execve(bash, argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ScriptRun run;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open_count = 2;
  char buf[4096];
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Whether `pid` is a live process (a zombie counts as gone).
bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (stat) {
    const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
  }
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

pid_t ReadPid(const fs::path& file) {
  std::ifstream in(file);
  long pid = 0;
  return (in >> pid) ? static_cast<pid_t>(pid) : 0;
}

// Clusters of test processes that were killed along with their watchdogs: their watched
// process and watchdog are gone (a cluster still starting has a live watched process).
void SweepLeftovers(const fs::path& parent) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kDirPrefix, 0) != 0) continue;
    const pid_t watched = ReadPid(entry.path() / "watch.pid");
    if (watched == 0 || ProcessAlive(watched)) continue;
    if (ProcessAlive(ReadPid(entry.path() / "watchdog.pid"))) continue;  // it is on it
    const ScriptRun run = RunScript({"stop", entry.path().string()});
    if (run.exit_code != 0) {
      std::cerr << "FreshPgDatabase: could not remove the leftover cluster " << entry.path() << ":\n"
                << run.err;
    }
  }
}

using PgConn = std::unique_ptr<PGconn, decltype(&PQfinish)>;

PgConn Connect(const std::string& url) {
  const char* keys[] = {"dbname", "connect_timeout", nullptr};
  const char* values[] = {url.c_str(), "10", nullptr};
  PgConn conn(PQconnectdbParams(keys, values, /*expand_dbname=*/1), &PQfinish);
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    throw std::runtime_error("FreshPgDatabase: cannot connect to " + url + ": " +
                             (conn ? PQerrorMessage(conn.get()) : "out of memory"));
  }
  return conn;
}

void Exec(PGconn* conn, const std::string& sql) {
  std::unique_ptr<PGresult, decltype(&PQclear)> res(PQexec(conn, sql.c_str()), &PQclear);
  if (PQresultStatus(res.get()) != PGRES_COMMAND_OK) {
    throw std::runtime_error("FreshPgDatabase: " + sql + ": " + PQerrorMessage(conn));
  }
}

// `base` with its database replaced by `dbname`: the path of a postgresql:// or postgres:// URL,
// else (a key=value connection string) a dbname= appended, which libpq lets win.
std::string WithDatabase(const std::string& base, const std::string& dbname) {
  for (const char* scheme : {"postgresql://", "postgres://"}) {
    if (base.rfind(scheme, 0) != 0) continue;
    const size_t authority = std::strlen(scheme);
    const size_t query = std::min(base.find('?', authority), base.size());
    const size_t path = std::min(base.find('/', authority), query);
    return base.substr(0, path) + "/" + dbname + base.substr(query);
  }
  return base + " dbname=" + dbname;
}

class Cluster {
 public:
  // Starts the cluster (or takes A2AD_TEST_PG_URL); throws std::runtime_error when it cannot.
  void Start() {
    if (const char* url = std::getenv("A2AD_TEST_PG_URL"); url != nullptr && *url != '\0') {
      base_url_ = url;
      external_ = true;
      return;
    }
    // ctest's shared cluster (tests/support/pg_fixture.sh): its URL in a file, when it runs.
    if (const char* file = std::getenv("A2AD_TEST_PG_URL_FILE"); file != nullptr && *file != '\0') {
      std::ifstream in(file);
      std::string url;
      if (in && std::getline(in, url) && !url.empty()) {
        base_url_ = url;
        external_ = true;
        return;
      }
    }
    if (::access(kScript, R_OK) != 0) {
      throw std::runtime_error(std::string("FreshPgDatabase: ") + kScript + " not found");
    }
    // /tmp rather than TMPDIR: the socket path must stay short, and the postgres user must be
    // able to get through every parent directory.
    const fs::path parent = "/tmp";
    SweepLeftovers(parent);
    std::string templ = (parent / (std::string(kDirPrefix) + "XXXXXX")).string();
    if (::mkdtemp(templ.data()) == nullptr) {
      throw std::runtime_error("FreshPgDatabase: mkdtemp " + templ + ": " + std::strerror(errno));
    }
    const ScriptRun run =
        RunScript({"start", templ}, {"PG_SCRATCH_WATCH_PID=" + std::to_string(::getpid())});
    if (run.exit_code != 0) {
      const ScriptRun stop = RunScript({"stop", templ});
      if (stop.exit_code != 0) {
        std::error_code ec;
        fs::remove(templ, ec);  // only when still empty: failed before it made anything
      }
      throw std::runtime_error("FreshPgDatabase: " + std::string(kScript) + " start " + templ +
                               " failed (exit " + std::to_string(run.exit_code) + "):\n" + run.err);
    }
    std::string url = run.out;
    while (!url.empty() && (url.back() == '\n' || url.back() == '\r')) url.pop_back();
    if (url.rfind("postgresql://", 0) != 0 || url.find('\n') != std::string::npos) {
      RunScript({"stop", templ});
      throw std::runtime_error("FreshPgDatabase: unexpected output of " + std::string(kScript) +
                               " start: " + run.out + "\n" + run.err);
    }
    dir_ = templ;
    owner_ = ::getpid();
    base_url_ = url;
  }

  std::string NewDatabase() {
    static std::atomic<unsigned> counter{0};
    std::random_device entropy;
    char suffix[9];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(entropy()));
    // Unique within this process (counter), between processes (pid) and, for a shared
    // A2AD_TEST_PG_URL server, between machines (random).
    const std::string name = "a2ad_test_" + std::to_string(::getpid()) + "_" +
                             std::to_string(counter.fetch_add(1)) + "_" + suffix;
    const PgConn conn = Connect(base_url_);
    Exec(conn.get(), "CREATE DATABASE \"" + name + "\"");
    if (external_) {
      const std::lock_guard lock(mu_);
      created_.push_back(name);
    }
    return WithDatabase(base_url_, name);
  }

  // At exit, also after a failed test; not in a forked child (a death test) that exits.
  ~Cluster() {
    if (external_) {
      DropCreated();
      return;
    }
    if (dir_.empty() || owner_ != ::getpid()) return;
    const ScriptRun run = RunScript({"stop", dir_});
    if (run.exit_code != 0) {
      std::cerr << "FreshPgDatabase: stopping the cluster in " << dir_ << " failed:\n" << run.err;
    }
  }

 private:
  void DropCreated() noexcept {
    try {
      const std::lock_guard lock(mu_);
      if (created_.empty()) return;
      const PgConn conn = Connect(base_url_);
      for (const auto& name : created_) {
        Exec(conn.get(), "DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
      }
    } catch (const std::exception& e) {
      std::cerr << "FreshPgDatabase: dropping the test databases: " << e.what() << "\n";
    }
  }

  std::string base_url_;
  bool external_ = false;
  std::string dir_;  // of our own cluster
  pid_t owner_ = 0;
  std::mutex mu_;
  std::vector<std::string> created_;  // on an A2AD_TEST_PG_URL server
};

}  // namespace

std::string FreshPgDatabase() {
  static Cluster cluster;
  static std::once_flag started;
  static std::string start_error;  // a failed start is not retried by every later test
  std::call_once(started, [] {
    try {
      cluster.Start();
    } catch (const std::exception& e) {
      start_error = e.what();
    }
  });
  if (!start_error.empty()) throw std::runtime_error(start_error);
  return cluster.NewDatabase();
}

}  // namespace a2ad::test

namespace a2ad::test {

std::string PgQuery(const std::string& url, const std::string& sql) {
  PGconn* c = PQconnectdb(url.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    ADD_FAILURE() << "PgQuery: cannot connect: " << PQerrorMessage(c);
    PQfinish(c);
    return {};
  }
  PGresult* r = PQexec(c, sql.c_str());
  const auto st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    ADD_FAILURE() << sql << ": " << PQerrorMessage(c);
  std::string first = PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
  PQclear(r);
  PQfinish(c);
  return first;
}

}  // namespace a2ad::test

// Under A2AD_TEST_BACKEND=postgres, a server started by testing::ServerProcess keeps its data in
// a database of its own, the same one each time it starts on the same data directory.
namespace a2ad::testing {
namespace {

std::string DatabaseForDataDir(const std::string& data_dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> urls;
  std::lock_guard lock(mu);
  auto it = urls.find(data_dir);
  if (it == urls.end()) it = urls.emplace(data_dir, test::FreshPgDatabase()).first;
  return it->second;
}

const bool registered = [] {
  g_database_for_data_dir = &DatabaseForDataDir;
  return true;
}();

}  // namespace
}  // namespace a2ad::testing

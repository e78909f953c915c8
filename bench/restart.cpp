// Restart benchmark (bench/RESULTS.md "Restart with stored tasks").
//
//   a2ad_bench_restart seed --data-dir D --tasks N
//       Writes N completed echo tasks into D/a2ad.db through the real SqliteTaskStore: each
//       task is the record and the four log events a2ad's echo skill commits
//       (a2a.task.submitted, run.started, artifact.created, run.completed), folded with the
//       server's own projection (tasks::ApplyEvent), so the rows are the server's rows.
//       Prints "SEED tasks=N seconds=S first_id=ID last_id=ID db_mb=M".
//
//   a2ad_bench_restart time --a2ad BIN --data-dir D --task-id ID [--cold 1]
//       --cold 1 first evicts the database files from the page cache (posix_fadvise). Spawns `BIN
//       serve --listen 127.0.0.1:0 --data-dir D`, waits for its ready line, then sends tasks/get
//       for ID until one answers with the task. Prints "RESTART ready_ms=X first_get_ms=Y rss_mb=Z"
//       (times from just before fork()). Stops the server with SIGTERM.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "a2ad/tasks/task_projection.hpp"

namespace json = boost::json;
using namespace a2ad;
using Clock = std::chrono::steady_clock;

namespace {

std::string Arg(int argc, char** argv, const std::string& name, const std::string& fallback = "") {
  for (int i = 2; i + 1 < argc; ++i)
    if (name == argv[i]) return argv[i + 1];
  return fallback;
}

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The four events of one echo task, folded into its record exactly as TaskService does.
core::Result<storage::TaskCommit> EchoTask(core::IdGenerator& ids, int64_t now_ms) {
  const std::string task_id = ids.Next();
  protocol::Message msg;
  msg.message_id = ids.Next();
  msg.context_id = ids.Next();
  msg.task_id = task_id;
  msg.role = protocol::Role::kUser;
  msg.parts.push_back(protocol::Part::Text("hello from the load generator"));
  protocol::Artifact artifact;
  artifact.artifact_id = task_id + "-echo";
  artifact.name = "echo";
  artifact.parts = msg.parts;

  std::vector<std::pair<std::string, json::object>> drafts;
  json::object submitted;
  submitted["contextId"] = msg.context_id;
  submitted["skillId"] = "echo";
  submitted["message"] = protocol::MessageToJson(msg);
  drafts.emplace_back(protocol::kEvTaskSubmitted, std::move(submitted));
  json::object started;
  started["workflowId"] = "echo";
  started["transport"] = "a2a";
  drafts.emplace_back(protocol::kEvRunStarted, std::move(started));
  json::object created;
  created["artifactId"] = artifact.artifact_id;
  created["artifactType"] = "a2a.artifact";
  created["artifact"] = protocol::ArtifactToJson(artifact);
  created["lastChunk"] = true;
  drafts.emplace_back(protocol::kEvArtifactCreated, std::move(created));
  json::object completed;
  completed["outputs"] = json::object();
  drafts.emplace_back(protocol::kEvRunCompleted, std::move(completed));

  storage::TaskCommit commit;
  commit.expected_last_sequence = -1;
  storage::TaskRecord record;
  for (auto& [type, payload] : drafts) {
    protocol::RunEvent e;
    e.event_id = ids.Next();
    e.run_id = task_id;
    e.type = type;
    e.node_id = type == protocol::kEvArtifactCreated ? "echo" : "";
    e.payload = std::move(payload);
    e.timestamp_ms = now_ms;
    e.sequence = record.last_sequence + 1;
    if (auto applied = tasks::ApplyEvent(record, e); !applied) return std::move(applied).error();
    commit.events.push_back(std::move(e));
  }
  commit.record = std::move(record);
  return commit;
}

int Seed(int argc, char** argv) {
  const std::string dir = Arg(argc, argv, "--data-dir");
  const long n = std::stol(Arg(argc, argv, "--tasks", "0"));
  if (dir.empty() || n <= 0) {
    std::fprintf(stderr, "seed: --data-dir D --tasks N\n");
    return 2;
  }
  std::filesystem::create_directories(dir);
  storage::SqliteOptions opts;
  opts.max_batch_commits = 4096;
  auto opened =
      storage::SqliteTaskStore::Open((std::filesystem::path(dir) / "a2ad.db").string(), opts);
  if (!opened) {
    std::fprintf(stderr, "seed: %s\n", opened.error().message.c_str());
    return 1;
  }
  auto store = std::move(opened).value();
  core::SystemClock clock;
  auto ids = core::MakeUuidV7Generator(clock);

  std::mutex mu;
  std::condition_variable cv;
  long in_flight = 0;
  std::atomic<long> failed{0};
  std::string first_id, last_id, first_error;
  const long kMaxInFlight = 16384;
  const auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) {
    auto commit = EchoTask(*ids, clock.NowMs());
    if (!commit) {
      std::fprintf(stderr, "seed: %s\n", commit.error().message.c_str());
      return 1;
    }
    if (first_id.empty()) first_id = commit.value().record.task.id;
    last_id = commit.value().record.task.id;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < kMaxInFlight; });
      ++in_flight;
    }
    store->Commit(std::move(commit).value(), [&](core::Result<void> r) {
      std::lock_guard lock(mu);
      if (!r) {
        if (failed++ == 0) first_error = r.error().message;
      }
      --in_flight;
      cv.notify_all();
    });
    if ((i + 1) % 100000 == 0)
      std::fprintf(stderr, "seed: %ld tasks, %.1f s\n", i + 1,
                   std::chrono::duration<double>(Clock::now() - t0).count());
  }
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return in_flight == 0; });
  }
  store->Close();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (failed) {
    std::fprintf(stderr, "seed: %ld commits failed: %s\n", failed.load(), first_error.c_str());
    return 1;
  }
  double bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) bytes += static_cast<double>(entry.file_size());
  std::printf("SEED tasks=%ld seconds=%.1f first_id=%s last_id=%s db_mb=%.0f\n", n, secs,
              first_id.c_str(), last_id.c_str(), bytes / 1048576.0);
  return 0;
}

// One HTTP/1.1 POST on a fresh connection; returns the status (0 on connection failure).
int Post(uint16_t port, const std::string& body, std::string& response) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return 0;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::string req =
      "POST /v1/a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return 0;
  }
  response.clear();
  char buf[16384];
  for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0;) response.append(buf, got);
  close(fd);
  int status = 0;
  if (response.rfind("HTTP/1.1 ", 0) == 0) status = std::atoi(response.c_str() + 9);
  return status;
}

double VmHwmMb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

int Time(int argc, char** argv) {
  const std::string bin = Arg(argc, argv, "--a2ad");
  const std::string dir = Arg(argc, argv, "--data-dir");
  const std::string id = Arg(argc, argv, "--task-id");
  if (bin.empty() || dir.empty() || id.empty()) {
    std::fprintf(stderr, "time: --a2ad BIN --data-dir D --task-id ID\n");
    return 2;
  }
  if (Arg(argc, argv, "--cold") == "1") {
    // Drop this database's pages from the page cache (only these files, nothing else on
    // the machine), so the server reads them from disk.
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const int fd = open(entry.path().c_str(), O_RDONLY);
      if (fd < 0) continue;
      fdatasync(fd);
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      close(fd);
    }
  }
  int out[2];
  if (pipe(out) != 0) return 1;
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execl(bin.c_str(), bin.c_str(), "serve", "--listen", "127.0.0.1:0", "--data-dir", dir.c_str(),
          "--log-level", "warn", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  const auto t_ready = Clock::now();
  const auto at = line.find("http://127.0.0.1:");
  if (at == std::string::npos) {
    std::fprintf(stderr, "time: no ready line from the server (got '%s')\n", line.c_str());
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return 1;
  }
  const auto port = static_cast<uint16_t>(std::atoi(line.c_str() + at + 17));
  const std::string body =
      R"({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":")" + id + R"("}})";
  std::string response;
  int attempts = 0;
  Clock::time_point t_get;
  for (;;) {
    ++attempts;
    const int status = Post(port, body, response);
    if (status == 200 && response.find("\"result\"") != std::string::npos &&
        response.find(id) != std::string::npos) {
      t_get = Clock::now();
      break;
    }
    if (attempts > 100000) {
      std::fprintf(stderr, "time: tasks/get never answered: %s\n", response.c_str());
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      return 1;
    }
  }
  const double rss = VmHwmMb(pid);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out[0]);
  std::printf("RESTART ready_ms=%.1f first_get_ms=%.1f attempts=%d rss_mb=%.1f\n", Ms(t0, t_ready),
              Ms(t0, t_get), attempts, rss);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "seed") return Seed(argc, argv);
  if (cmd == "time") return Time(argc, argv);
  std::fprintf(stderr,
               "usage: a2ad_bench_restart seed --data-dir D --tasks N\n"
               "       a2ad_bench_restart time --a2ad BIN --data-dir D --task-id ID\n");
  return 2;
}

#pragma once
// What the load generators share (bench/loadgen.cpp for HTTP, bench/grpc_loadgen.cpp for
// gRPC): reading the body templates, the CPU and memory probes of /proc, the percentiles and
// the "RESULT key=value ..." line that bench/run_bench.sh and bench/report.py read.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::ostringstream s;
  s << in.rdbuf();
  std::string out = s.str();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

inline void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// utime + stime of a process (all threads), in seconds.
inline double ProcCpuSeconds(int pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {  // field 3 is the state; utime is 14, stime 15
    if (i == 14) utime = std::stoull(f);
    if (i == 15) {
      stime = std::stoull(f);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

inline double ProcStatusMb(int pid, const std::string& key) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return 0;
}

// Busy time of the whole machine (all CPUs), in seconds, from /proc/stat.
inline double MachineBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {0, 0, 0, 0,
                             0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
  in >> cpu;
  for (auto& x : v) in >> x;
  const unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return static_cast<double>(busy) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// This process's CPU time (all threads), in seconds.
inline double SelfCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

inline void RaiseFileLimit() {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
}

inline double Percentile(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * (sorted.size() - 1) + 0.5));
  return sorted[i] / 1000.0;
}

// utime + stime of `pid` and of every process whose parent it is (a PostgreSQL postmaster and
// its backends: the database's CPU, apart from the server's), in seconds. 0 for pid 0.
inline double TreeCpuSeconds(int pid) {
  if (pid <= 0) return 0;
  double total = ProcCpuSeconds(pid);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto close = line.rfind(')');  // the command may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid) total += ProcCpuSeconds(std::stoi(name));
  }
  return total;
}

// The probes taken at the edges of the measured window.
struct Probe {
  double server_cpu = 0, self_cpu = 0, busy = 0, db_cpu = 0;
  static Probe Take(int server_pid, int db_pid = 0) {
    return {ProcCpuSeconds(server_pid), SelfCpuSeconds(), MachineBusySeconds(),
            TreeCpuSeconds(db_pid)};
  }
};

struct Outcome {
  std::string label;
  int connections = 0;
  std::vector<uint32_t> latencies_us;  // measured window only; sorted by PrintResult
  double window_s = 0;
  Probe start, end;
  uint64_t errors = 0, unexpected = 0, reconnects = 0;
  int server_pid = 0;
  int db_pid = 0;  // a database's postmaster: its CPU is reported apart (db_cpu_ms_per_1k)
  size_t seeded = 0;
};

// The last line of stdout: "RESULT key=value ...".
inline void PrintResult(Outcome& o) {
  auto& lat = o.latencies_us;
  std::sort(lat.begin(), lat.end());
  const double window = o.window_s;
  const double n = static_cast<double>(lat.size());
  const double server_cpu = o.end.server_cpu - o.start.server_cpu;
  const double self_cpu = o.end.self_cpu - o.start.self_cpu;
  const double busy = o.end.busy - o.start.busy;
  double mean = 0;
  for (auto v : lat) mean += v;
  mean = lat.empty() ? 0 : mean / n / 1000.0;
  std::printf(
      "RESULT label=%s connections=%d requests=%zu window_s=%.3f rps=%.1f p50_ms=%.3f "
      "p90_ms=%.3f p99_ms=%.3f max_ms=%.3f mean_ms=%.3f errors=%" PRIu64 " unexpected=%" PRIu64
      " reconnects=%" PRIu64
      " server_cpu_s=%.2f cpu_ms_per_1k=%.1f server_cpu_pct=%.0f "
      "client_cpu_pct=%.0f other_cpu_pct=%.0f rss_peak_mb=%.1f rss_mb=%.1f seeded=%zu",
      o.label.empty() ? "-" : o.label.c_str(), o.connections, lat.size(), window,
      window > 0 ? n / window : 0, Percentile(lat, 0.50), Percentile(lat, 0.90),
      Percentile(lat, 0.99), lat.empty() ? 0 : lat.back() / 1000.0, mean, o.errors, o.unexpected,
      o.reconnects, server_cpu, n > 0 ? server_cpu / n * 1e6 : 0,
      window > 0 ? 100 * server_cpu / window : 0, window > 0 ? 100 * self_cpu / window : 0,
      window > 0 ? std::max(0.0, 100 * (busy - server_cpu - self_cpu) / window) : 0,
      ProcStatusMb(o.server_pid, "VmHWM"), ProcStatusMb(o.server_pid, "VmRSS"), o.seeded);
  if (o.db_pid > 0) {  // the database's own CPU, apart from the server's
    const double db_cpu = o.end.db_cpu - o.start.db_cpu;
    std::printf(" db_cpu_s=%.2f db_cpu_ms_per_1k=%.1f", db_cpu, n > 0 ? db_cpu / n * 1e6 : 0);
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace bench

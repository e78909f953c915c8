// Closed-loop HTTP/1.1 load generator for the JSON-RPC scenarios in bench/RESULTS.md.
//
// C keep-alive connections each send one request, wait for the whole response (including an
// SSE body that ends with its last chunk or the connection), and send the next. Warm-up first,
// then a measured window of fixed length; every response completed inside the window is one
// latency sample (sorted at the end for p50/p99). CPU of the server process comes from
// /proc/<pid>/stat (utime + stime) at the window's edges, its peak RSS from VmHWM at the end;
// "other" CPU is the machine's busy time (/proc/stat) minus the server's and this process's.
//
//   a2ad_bench_loadgen --port P --body-file send.json --connections 16 --warmup-s 1 --duration-s 5
//       [--header 'A2A-Version: 1.0'] [--server-pid PID] [--expect completed]
//       [--seed-body-file send.json --seed 1000]   # then @ID@ in --body-file = a seeded task id
//
// Body templates: every "@SEQ@" becomes a 16-digit request counter (unique message ids), every
// "@ID@" a task id taken round-robin from the seeded tasks (the "id" of the JSON-RPC result,
// or of result.task for v1.0). The last line of stdout is "RESULT key=value ...".
//
// Loopback only: the host must be 127.0.0.1 (or ::1).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string path = "/v1/a2a";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string seed_body;
  int seed = 0;
  int connections = 1;
  double warmup_s = 1;
  double duration_s = 5;
  int server_pid = 0;
  std::string expect;
  std::string label;
};

std::string ReadFile(const std::string& path) {
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

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

double ProcCpuSeconds(int pid) {
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

double ProcStatusMb(int pid, const std::string& key) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return 0;
}

// Busy time of the whole machine (all CPUs), in seconds, from /proc/stat.
double MachineBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {0, 0, 0, 0,
                             0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
  in >> cpu;
  for (auto& x : v) in >> x;
  const unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return static_cast<double>(busy) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double SelfCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// The task id in a JSON-RPC response: result.id (v0.3 Task) or result.task.id (v1.0).
std::string TaskIdOf(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object()) return {};
  const auto* result = v.as_object().if_contains("result");
  if (!result || !result->is_object()) return {};
  const auto* obj = &result->as_object();
  if (const auto* task = obj->if_contains("task"); task && task->is_object())
    obj = &task->as_object();
  if (const auto* id = obj->if_contains("id"); id && id->is_string())
    return std::string(id->as_string());
  return {};
}

enum class Phase { kWarmup, kMeasure, kDone };

struct Shared {
  const Options* opt = nullptr;
  tcp::endpoint endpoint;
  Phase phase = Phase::kWarmup;
  uint64_t seq = 0;
  std::vector<std::string> ids;
  size_t next_id = 0;
  std::vector<uint32_t> latencies_us;  // measured window only
  uint64_t errors = 0, unexpected = 0, reconnects = 0, warmup_requests = 0;
  uint64_t bytes_in = 0;
  std::string first_error;
  int running = 0;
};

std::string BuildBody(Shared& s, const std::string& tmpl) {
  std::string body = tmpl;
  if (body.find("@SEQ@") != std::string::npos) {
    char seq[32];
    std::snprintf(seq, sizeof seq, "%016" PRIu64, ++s.seq);
    ReplaceAll(body, "@SEQ@", seq);
  }
  if (body.find("@ID@") != std::string::npos && !s.ids.empty()) {
    ReplaceAll(body, "@ID@", s.ids[s.next_id]);
    s.next_id = (s.next_id + 1) % s.ids.size();
  }
  return body;
}

http::request<http::string_body> BuildRequest(const Options& opt, std::string body) {
  http::request<http::string_body> req(http::verb::post, opt.path, 11);
  req.set(http::field::host, opt.host + ":" + std::to_string(opt.port));
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "application/json, text/event-stream");
  for (const auto& [name, value] : opt.headers) req.set(name, value);
  req.keep_alive(true);
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

// One connection: send, read the whole response, repeat until the phase is kDone. Runs `count`
// requests when count > 0 (the seeding phase), collecting task ids.
asio::awaitable<void> Connection(Shared& s, const std::string* tmpl, int count, bool collect) {
  const Options& opt = *s.opt;
  auto exec = co_await asio::this_coro::executor;
  tcp::socket sock(exec);
  beast::flat_buffer buf;
  bool connected = false;
  int done = 0;
  ++s.running;
  while (count > 0 ? done < count : s.phase != Phase::kDone) {
    boost::system::error_code ec;
    const auto t0 = Clock::now();
    if (!connected) {
      sock = tcp::socket(exec);
      co_await sock.async_connect(s.endpoint, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        ++s.errors;
        if (s.first_error.empty()) s.first_error = "connect: " + ec.message();
        asio::steady_timer wait(exec, std::chrono::milliseconds(10));
        co_await wait.async_wait(asio::use_awaitable);
        continue;
      }
      sock.set_option(tcp::no_delay(true), ec);
      connected = true;
      buf.clear();
    }
    auto req = BuildRequest(opt, BuildBody(s, *tmpl));
    co_await http::async_write(sock, req, asio::redirect_error(asio::use_awaitable, ec));
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    parser.header_limit(64 * 1024);
    if (!ec)
      co_await http::async_read(sock, buf, parser, asio::redirect_error(asio::use_awaitable, ec));
    const auto t1 = Clock::now();
    ++done;
    if (ec) {
      ++s.errors;
      if (s.first_error.empty()) s.first_error = "request: " + ec.message();
      sock.close(ec);
      connected = false;
      ++s.reconnects;
      continue;
    }
    const auto& res = parser.get();
    s.bytes_in += res.body().size();
    bool ok = res.result() == http::status::ok;
    if (ok && !opt.expect.empty() && res.body().find(opt.expect) == std::string::npos) ok = false;
    if (!ok) {
      ++s.unexpected;
      if (s.first_error.empty())
        s.first_error = "unexpected response " + std::to_string(res.result_int()) + ": " +
                        res.body().substr(0, 300);
    }
    if (collect) {
      auto id = TaskIdOf(res.body());
      if (!id.empty()) s.ids.push_back(std::move(id));
    }
    if (!res.keep_alive()) {
      sock.close(ec);
      connected = false;
      ++s.reconnects;
    }
    if (count > 0) continue;
    // A sample is a response completed inside the measured window.
    if (s.phase == Phase::kMeasure) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count();
      s.latencies_us.push_back(static_cast<uint32_t>(std::max<int64_t>(us, 0)));
    } else if (s.phase == Phase::kWarmup) {
      ++s.warmup_requests;
    }
  }
  boost::system::error_code ignored;
  sock.shutdown(tcp::socket::shutdown_both, ignored);
  --s.running;
}

double Percentile(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * (sorted.size() - 1) + 0.5));
  return sorted[i] / 1000.0;
}

void Usage() {
  std::fprintf(stderr,
               "usage: a2ad_bench_loadgen --port P --body-file F [--host 127.0.0.1] [--path "
               "/v1/a2a]\n  [--header 'Name: value']... [--connections C] [--warmup-s S] "
               "[--duration-s S]\n  [--server-pid PID] [--expect SUBSTRING] [--seed-body-file F "
               "--seed N] [--label TEXT]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string body_file, seed_file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Usage();
      return argv[++i];
    };
    if (a == "--host")
      opt.host = next();
    else if (a == "--port")
      opt.port = static_cast<uint16_t>(std::stoi(next()));
    else if (a == "--path")
      opt.path = next();
    else if (a == "--header") {
      auto h = next();
      auto colon = h.find(':');
      if (colon == std::string::npos) Usage();
      auto value = h.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      opt.headers.emplace_back(h.substr(0, colon), value);
    } else if (a == "--body-file")
      body_file = next();
    else if (a == "--seed-body-file")
      seed_file = next();
    else if (a == "--seed")
      opt.seed = std::stoi(next());
    else if (a == "--connections")
      opt.connections = std::stoi(next());
    else if (a == "--warmup-s")
      opt.warmup_s = std::stod(next());
    else if (a == "--duration-s")
      opt.duration_s = std::stod(next());
    else if (a == "--server-pid")
      opt.server_pid = std::stoi(next());
    else if (a == "--expect")
      opt.expect = next();
    else if (a == "--label")
      opt.label = next();
    else
      Usage();
  }
  if (opt.port == 0 || body_file.empty() || opt.connections < 1) Usage();
  if (opt.host != "127.0.0.1" && opt.host != "::1") {
    std::fprintf(stderr, "loopback only: --host must be 127.0.0.1 or ::1\n");
    return 2;
  }
  opt.body = ReadFile(body_file);
  if (!seed_file.empty()) opt.seed_body = ReadFile(seed_file);

  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }

  asio::io_context io(1);
  Shared s;
  s.opt = &opt;
  s.endpoint = tcp::endpoint(asio::ip::make_address(opt.host), opt.port);

  // Seeding: create the tasks that @ID@ refers to (not measured).
  if (opt.seed > 0 && !opt.seed_body.empty()) {
    const int seeders = std::min(opt.seed, 16);
    for (int c = 0; c < seeders; ++c) {
      const int n = opt.seed / seeders + (c < opt.seed % seeders ? 1 : 0);
      asio::co_spawn(io, Connection(s, &opt.seed_body, n, true), asio::detached);
    }
    io.run();
    io.restart();
    if (s.ids.empty()) {
      std::fprintf(stderr, "seeding created no tasks (%s)\n", s.first_error.c_str());
      return 1;
    }
    s.errors = s.unexpected = s.reconnects = 0;
    s.first_error.clear();
  }

  s.latencies_us.reserve(1 << 20);
  for (int c = 0; c < opt.connections; ++c)
    asio::co_spawn(io, Connection(s, &opt.body, 0, false), asio::detached);

  double cpu0 = 0, cpu1 = 0, self0 = 0, self1 = 0, busy0 = 0, busy1 = 0;
  Clock::time_point m0, m1;
  asio::steady_timer phase_timer(io);
  phase_timer.expires_after(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.warmup_s)));
  phase_timer.async_wait([&](boost::system::error_code) {
    s.phase = Phase::kMeasure;
    m0 = Clock::now();
    cpu0 = ProcCpuSeconds(opt.server_pid);
    self0 = SelfCpuSeconds();
    busy0 = MachineBusySeconds();
    phase_timer.expires_after(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.duration_s)));
    phase_timer.async_wait([&](boost::system::error_code) {
      s.phase = Phase::kDone;
      m1 = Clock::now();
      cpu1 = ProcCpuSeconds(opt.server_pid);
      self1 = SelfCpuSeconds();
      busy1 = MachineBusySeconds();
    });
  });
  io.run();

  auto& lat = s.latencies_us;
  std::sort(lat.begin(), lat.end());
  const double window = std::chrono::duration<double>(m1 - m0).count();
  const double n = static_cast<double>(lat.size());
  const double server_cpu = cpu1 - cpu0;
  double mean = 0;
  for (auto v : lat) mean += v;
  mean = lat.empty() ? 0 : mean / n / 1000.0;
  if (!s.first_error.empty()) std::fprintf(stderr, "first error: %s\n", s.first_error.c_str());
  std::printf(
      "RESULT label=%s connections=%d requests=%zu window_s=%.3f rps=%.1f p50_ms=%.3f "
      "p90_ms=%.3f p99_ms=%.3f max_ms=%.3f mean_ms=%.3f errors=%" PRIu64 " unexpected=%" PRIu64
      " reconnects=%" PRIu64
      " server_cpu_s=%.2f cpu_ms_per_1k=%.1f server_cpu_pct=%.0f "
      "client_cpu_pct=%.0f other_cpu_pct=%.0f rss_peak_mb=%.1f rss_mb=%.1f seeded=%zu\n",
      opt.label.empty() ? "-" : opt.label.c_str(), opt.connections, lat.size(), window,
      window > 0 ? n / window : 0, Percentile(lat, 0.50), Percentile(lat, 0.90),
      Percentile(lat, 0.99), lat.empty() ? 0 : lat.back() / 1000.0, mean, s.errors, s.unexpected,
      s.reconnects, server_cpu, n > 0 ? server_cpu / n * 1e6 : 0,
      window > 0 ? 100 * server_cpu / window : 0, window > 0 ? 100 * (self1 - self0) / window : 0,
      window > 0 ? std::max(0.0, 100 * ((busy1 - busy0) - server_cpu - (self1 - self0)) / window)
                 : 0,
      ProcStatusMb(opt.server_pid, "VmHWM"), ProcStatusMb(opt.server_pid, "VmRSS"), s.ids.size());
  return 0;
}

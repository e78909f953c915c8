// a2ad_bench_fanout: SSE fan-out load client (bench/RESULTS.md "SSE fan-out").
//
// One process: a controller thread (creates/cancels the ticker task over plain HTTP, samples
// the server's RSS and CPU, decides when the run is over) and 1-2 worker threads, each running
// its own io_context with a share of the N subscriber connections. Every subscriber POSTs
// `tasks/resubscribe` and parses the raw SSE body incrementally.
//
// Flow:
//   1. create a `ticker` task (unless --task) with many ticks, --interval-ms apart;
//   2. connect all N subscribers (at most --connect-concurrency handshakes in flight) and
//      wait until each has its first event (the task snapshot);
//   3. publish t_ready; the measured ticks are the first --ticks ticks emitted at or after
//      t_ready, so every measured tick had all N subscribers attached;
//   4. when every live subscriber has the last measured tick, cancel the task (the server then
//      ends every stream with the canceled status-update) and wait for the streams to close.
//
// Latency = receive time (system clock, taken once per socket read) - `emittedAtUs` (the
// server's system clock when it committed the tick): same machine, same clock.
//
// Prints a human summary and one `RESULT key=value ...` line for bench/run_fanout.sh.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int subscribers = 100;
  int ticks = 100;       // measured ticks
  int interval_ms = 50;  // ticker interval (when the client creates the task)
  std::string task;      // existing task id: subscribe to it, do not create or cancel
  int server_pid = 0;    // for VmRSS / CPU sampling; 0 = not sampled
  int threads = 1;       // worker threads (1-2)
  int connect_concurrency = 256;
  int connect_timeout_s = 180;
  int run_timeout_s = 60;  // after t_ready, on top of ticks * interval
  bool quiet = false;
};

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --port P [--host 127.0.0.1] [--subscribers N] [--ticks T]\n"
               "          [--interval-ms I] [--task ID] [--server-pid PID] [--threads 1|2]\n"
               "          [--connect-concurrency C] [--connect-timeout-s S] [--run-timeout-s S]\n"
               "          [--quiet]\n",
               argv0);
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) Usage(argv[0]);
      return argv[++i];
    };
    if (a == "--host")
      o.host = val();
    else if (a == "--port")
      o.port = static_cast<uint16_t>(std::stoi(val()));
    else if (a == "--subscribers")
      o.subscribers = std::stoi(val());
    else if (a == "--ticks")
      o.ticks = std::stoi(val());
    else if (a == "--interval-ms")
      o.interval_ms = std::stoi(val());
    else if (a == "--task")
      o.task = val();
    else if (a == "--server-pid")
      o.server_pid = std::stoi(val());
    else if (a == "--threads")
      o.threads = std::stoi(val());
    else if (a == "--connect-concurrency")
      o.connect_concurrency = std::stoi(val());
    else if (a == "--connect-timeout-s")
      o.connect_timeout_s = std::stoi(val());
    else if (a == "--run-timeout-s")
      o.run_timeout_s = std::stoi(val());
    else if (a == "--quiet")
      o.quiet = true;
    else
      Usage(argv[0]);
  }
  if (o.port == 0 || o.subscribers < 1 || o.ticks < 1 || o.threads < 1 || o.threads > 2 ||
      o.connect_concurrency < 1)
    Usage(argv[0]);
  return o;
}

std::optional<int64_t> IntAfter(std::string_view s, std::string_view key, size_t from = 0) {
  size_t p = s.find(key, from);
  if (p == std::string_view::npos) return std::nullopt;
  p += key.size();
  int64_t v = 0;
  auto r = std::from_chars(s.data() + p, s.data() + s.size(), v);
  if (r.ec != std::errc()) return std::nullopt;
  return v;
}

// ---- server process sampling (/proc) ----

int64_t VmRssKb(int pid) {
  if (pid <= 0) return 0;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoll(line.c_str() + 6, nullptr, 10);
  return 0;
}

/// utime + stime of a process, in clock ticks.
int64_t ProcCpuTicks(int pid) {
  if (pid <= 0) return 0;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t p = s.rfind(')');
  if (p == std::string::npos) return 0;
  std::istringstream in(s.substr(p + 2));
  std::string field;
  int64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {  // fields 14 and 15 (1-based)
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return utime + stime;
}

/// Busy time of the whole machine (all CPUs), in clock ticks, from /proc/stat.
int64_t MachineBusyTicks() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  int64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
  f >> cpu;
  for (auto& x : v) f >> x;
  return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

double SelfCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// ---- one blocking JSON-RPC call for the controller ----

json::value RpcCall(const Options& o, const std::string& body) {
  asio::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(asio::ip::make_address(o.host), o.port));
  std::string req = "POST /v1/a2a HTTP/1.1\r\nHost: " + o.host + ":" + std::to_string(o.port) +
                    "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  asio::write(s, asio::buffer(req));
  std::string resp;
  boost::system::error_code ec;
  asio::read(s, asio::dynamic_buffer(resp), ec);  // until the server closes
  size_t p = resp.find("\r\n\r\n");
  if (p == std::string::npos) throw std::runtime_error("no HTTP response");
  if (resp.compare(0, 12, "HTTP/1.1 200") != 0)
    throw std::runtime_error("HTTP error: " + resp.substr(0, resp.find("\r\n")) + " " +
                             resp.substr(p + 4, 300));
  json::value v = json::parse(resp.substr(p + 4));
  if (v.as_object().contains("error"))
    throw std::runtime_error("JSON-RPC error: " + json::serialize(v.at("error")));
  return v.at("result");
}

std::string CreateTicker(const Options& o, int64_t ticks) {
  std::string mid = "fanout-" + std::to_string(getpid()) + "-" + std::to_string(NowUs());
  json::object msg{
      {"kind", "message"},
      {"role", "user"},
      {"messageId", mid},
      {"parts", json::array{json::object{
                    {"kind", "data"},
                    {"data", json::object{{"ticks", ticks}, {"intervalMs", o.interval_ms}}}}}},
      {"metadata", json::object{{"skillId", "ticker"}}}};
  json::object req{{"jsonrpc", "2.0"},
                   {"id", 1},
                   {"method", "message/send"},
                   {"params", json::object{{"message", msg},
                                           {"configuration", json::object{{"blocking", false}}}}}};
  json::value r = RpcCall(o, json::serialize(req));
  return std::string(r.at("id").as_string());
}

void CancelTask(const Options& o, const std::string& id) {
  json::object req{{"jsonrpc", "2.0"},
                   {"id", 2},
                   {"method", "tasks/cancel"},
                   {"params", json::object{{"id", id}}}};
  RpcCall(o, json::serialize(req));
}

// ---- shared state between workers and the controller ----

constexpr int kMaxTicks = 100001;

struct Shared {
  std::atomic<int> attached{0};        // got their snapshot
  std::atomic<int> failed_connect{0};  // never attached (connect / HTTP error / early close)
  std::atomic<int> closed_early{0};    // attached, then the stream ended before a terminal event
  std::atomic<int> finished{0};        // stream ended after a terminal status-update
  std::atomic<int> max_snapshot_tick{-1};
  std::atomic<int64_t> ready_us{0};  // 0 until every subscriber is attached
  std::atomic<bool> stop{false};
  std::vector<std::atomic<int>> tick_count = std::vector<std::atomic<int>>(kMaxTicks);
  std::vector<std::atomic<int64_t>> tick_emitted = std::vector<std::atomic<int64_t>>(kMaxTicks);
  std::mutex err_mu;
  std::vector<std::string> error_samples;
  std::atomic<int> error_events{0};  // `event: error` or JSON-RPC error payloads

  void NoteError(std::string e) {
    std::lock_guard lock(err_mu);
    if (error_samples.size() < 8) error_samples.push_back(std::move(e));
  }
};

struct Delivery {
  int32_t tick;
  int32_t latency_us;
};

struct WorkerStats {
  std::vector<Delivery> deliveries;  // measured (emitted >= ready) artifact-updates only
  int64_t all_deliveries = 0;
  int64_t gaps = 0;        // a tick arrived while an earlier one never did
  int64_t duplicates = 0;  // a tick arrived twice (or went backwards)
  int64_t keepalives = 0;
  int64_t bytes = 0;
  int64_t status_updates = 0;
};

class Worker;

struct Sub : std::enable_shared_from_this<Sub> {
  Sub(asio::io_context& io, int i) : sock(io), index(i) {}
  tcp::socket sock;
  int index;
  std::string pending;
  bool headers_done = false;
  bool attached = false;
  bool terminal = false;
  bool done = false;
  int64_t next_tick = -1;
  int64_t last_id = -1;
};

class Worker {
 public:
  Worker(const Options& o, Shared& sh, const std::string& request, int first, int count, int conc)
      : o_(o), sh_(sh), request_(request), next_(first), end_(first + count), conc_(conc) {
    stats_.deliveries.reserve(static_cast<size_t>(count) * static_cast<size_t>(o.ticks + 4));
    endpoint_ = tcp::endpoint(asio::ip::make_address(o.host), o.port);
    buf_.resize(64 * 1024);
  }

  void Run() {
    for (int i = 0; i < conc_; ++i) StartNext();
    auto guard = asio::make_work_guard(io_);
    io_.run();
  }

  /// From the controller thread: close every connection and end Run().
  void Stop() {
    asio::post(io_, [this] {
      for (auto& s : subs_) {
        boost::system::error_code ignored;
        s->sock.close(ignored);
      }
      io_.stop();
    });
  }

  WorkerStats& stats() { return stats_; }

 private:
  void StartNext() {
    if (next_ >= end_ || sh_.stop.load()) return;
    auto s = std::make_shared<Sub>(io_, next_++);
    subs_.push_back(s);
    s->sock.async_connect(endpoint_, [this, s](boost::system::error_code ec) {
      if (ec) return FailConnect(*s, "connect: " + ec.message());
      boost::system::error_code ignored;
      s->sock.set_option(tcp::no_delay(true), ignored);
      s->sock.non_blocking(true, ignored);
      asio::async_write(s->sock, asio::buffer(request_),
                        [this, s](boost::system::error_code wec, size_t) {
                          if (wec) return FailConnect(*s, "write request: " + wec.message());
                          WaitRead(s);
                        });
    });
  }

  void FailConnect(Sub& s, std::string why) {
    if (s.done) return;
    s.done = true;
    boost::system::error_code ignored;
    s.sock.close(ignored);
    sh_.failed_connect.fetch_add(1);
    sh_.NoteError("subscriber " + std::to_string(s.index) + ": " + why);
    StartNext();
  }

  void WaitRead(const std::shared_ptr<Sub>& s) {
    s->sock.async_wait(tcp::socket::wait_read,
                       [this, s](boost::system::error_code ec) { OnReadable(s, ec); });
  }

  void OnReadable(const std::shared_ptr<Sub>& s, boost::system::error_code ec) {
    if (s->done) return;
    if (ec) return Ended(*s, ec.message());
    const int64_t recv_us = NowUs();
    for (;;) {
      boost::system::error_code rec;
      size_t n = s->sock.read_some(asio::buffer(buf_), rec);
      if (rec == asio::error::would_block || rec == asio::error::try_again) break;
      if (rec) return Ended(*s, rec == asio::error::eof ? "eof" : rec.message());
      stats_.bytes += static_cast<int64_t>(n);
      s->pending.append(buf_.data(), n);
      if (!Consume(*s, recv_us)) return;
      if (n < buf_.size()) break;
    }
    WaitRead(s);
  }

  /// Parses what `pending` holds; false once the subscriber is finished.
  bool Consume(Sub& s, int64_t recv_us) {
    size_t pos = 0;
    std::string_view all(s.pending);
    if (!s.headers_done) {
      size_t h = all.find("\r\n\r\n");
      if (h == std::string_view::npos) return true;
      if (all.substr(0, 12) != "HTTP/1.1 200" ||
          all.substr(0, h).find("text/event-stream") == std::string_view::npos) {
        FailConnect(
            s, "bad response: " + std::string(all.substr(0, std::min<size_t>(all.size(), 400))));
        return false;
      }
      s.headers_done = true;
      pos = h + 4;
    }
    for (;;) {
      size_t e = all.find("\n\n", pos);
      if (e == std::string_view::npos) break;
      OnEvent(s, all.substr(pos, e - pos), recv_us);
      pos = e + 2;
    }
    s.pending.erase(0, pos);
    if (s.pending.capacity() > 64 * 1024 && s.pending.size() < 4096) s.pending.shrink_to_fit();
    return true;
  }

  void OnEvent(Sub& s, std::string_view ev, int64_t recv_us) {
    std::string_view data, event_type;
    bool comment_only = true;
    int64_t id = -1;
    size_t p = 0;
    while (p <= ev.size()) {
      size_t nl = ev.find('\n', p);
      if (nl == std::string_view::npos) nl = ev.size();
      std::string_view line = ev.substr(p, nl - p);
      if (line.rfind("data: ", 0) == 0) {
        data = line.substr(6);
        comment_only = false;
      } else if (line.rfind("id: ", 0) == 0) {
        std::from_chars(line.data() + 4, line.data() + line.size(), id);
        comment_only = false;
      } else if (line.rfind("event: ", 0) == 0) {
        event_type = line.substr(7);
        comment_only = false;
      }
      p = nl + 1;
    }
    if (comment_only) {
      ++stats_.keepalives;
      return;
    }
    if (event_type == "error" || data.find("\"error\":") != std::string_view::npos) {
      sh_.error_events.fetch_add(1);
      sh_.NoteError("subscriber " + std::to_string(s.index) +
                    " error event: " + std::string(data.substr(0, 300)));
      return;
    }
    if (id >= 0) {
      if (id <= s.last_id && s.attached) ++stats_.duplicates;
      s.last_id = id;
    }
    if (!s.attached) {  // the first event: the task snapshot
      if (data.find("\"kind\":\"task\"") == std::string_view::npos)
        sh_.NoteError("subscriber " + std::to_string(s.index) +
                      ": first event is not a task: " + std::string(data.substr(0, 200)));
      size_t last = data.rfind("\"tick\":");
      int64_t t = -1;
      if (last != std::string_view::npos) t = IntAfter(data, "\"tick\":", last).value_or(-1);
      s.next_tick = t + 1;
      int prev = sh_.max_snapshot_tick.load();
      while (t > prev && !sh_.max_snapshot_tick.compare_exchange_weak(prev, static_cast<int>(t))) {
      }
      s.attached = true;
      sh_.attached.fetch_add(1);
      if (IsTerminalState(data)) s.terminal = true;
      StartNext();  // one handshake slot free
      return;
    }
    if (data.find("\"kind\":\"artifact-update\"") != std::string_view::npos) {
      auto tick = IntAfter(data, "\"tick\":");
      auto emitted = IntAfter(data, "\"emittedAtUs\":");
      if (!tick || !emitted || *tick < 0 || *tick >= kMaxTicks) {
        sh_.NoteError("unparsable artifact-update: " + std::string(data.substr(0, 200)));
        return;
      }
      if (*tick > s.next_tick) stats_.gaps += *tick - s.next_tick;
      if (*tick < s.next_tick) ++stats_.duplicates;
      s.next_tick = *tick + 1;
      ++stats_.all_deliveries;
      auto& em = sh_.tick_emitted[static_cast<size_t>(*tick)];
      if (em.load(std::memory_order_relaxed) == 0) em.store(*emitted);
      const int64_t ready = sh_.ready_us.load();
      if (ready != 0 && *emitted >= ready)
        stats_.deliveries.push_back(
            {static_cast<int32_t>(*tick),
             static_cast<int32_t>(std::min<int64_t>(recv_us - *emitted, INT32_MAX))});
      sh_.tick_count[static_cast<size_t>(*tick)].fetch_add(1);
      return;
    }
    if (data.find("\"kind\":\"status-update\"") != std::string_view::npos) {
      ++stats_.status_updates;
      if (data.find("\"final\":true") != std::string_view::npos || IsTerminalState(data))
        s.terminal = true;
    }
  }

  static bool IsTerminalState(std::string_view data) {
    size_t st = data.find("\"status\":{");
    if (st == std::string_view::npos) return false;
    for (std::string_view state : {"\"state\":\"completed\"", "\"state\":\"canceled\"",
                                   "\"state\":\"failed\"", "\"state\":\"rejected\""})
      if (data.find(state, st) != std::string_view::npos) return true;
    return false;
  }

  void Ended(Sub& s, const std::string& why) {
    if (s.done) return;
    if (!s.attached) return FailConnect(s, "stream ended before the snapshot: " + why);
    s.done = true;
    boost::system::error_code ignored;
    s.sock.close(ignored);
    if (s.terminal) {
      sh_.finished.fetch_add(1);
    } else {
      sh_.closed_early.fetch_add(1);
      sh_.NoteError("subscriber " + std::to_string(s.index) +
                    " stream ended before a terminal event: " + why);
    }
    std::string().swap(s.pending);
  }

  const Options& o_;
  Shared& sh_;
  const std::string& request_;
  int next_;
  int end_;
  int conc_;
  asio::io_context io_{1};
  tcp::endpoint endpoint_;
  std::vector<char> buf_;
  std::vector<std::shared_ptr<Sub>> subs_;
  WorkerStats stats_;
};

double Percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return static_cast<double>(v[rank - 1]);
}

void RaiseNofile(int want) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t target = rl.rlim_max;
  if (rl.rlim_cur < target) {
    rl.rlim_cur = target;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < static_cast<rlim_t>(want) + 64)
    std::fprintf(stderr, "warning: RLIMIT_NOFILE is %llu; %d subscribers need more\n",
                 static_cast<unsigned long long>(rl.rlim_cur), want);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  RaiseNofile(o.subscribers);
  auto log = [&](const std::string& s) {
    if (!o.quiet) std::fprintf(stderr, "[fanout] %s\n", s.c_str());
  };

  Shared sh;
  const bool own_task = o.task.empty();
  std::string task = o.task;
  try {
    if (own_task) task = CreateTicker(o, kMaxTicks - 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot create the ticker task: %s\n", e.what());
    return 1;
  }
  log("task " + task);

  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int64_t rss_base = VmRssKb(o.server_pid);
  int64_t rss_peak = rss_base;
  auto sample_rss = [&] {
    int64_t r = VmRssKb(o.server_pid);
    rss_peak = std::max(rss_peak, r);
    return r;
  };

  const std::string body =
      R"({"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":")" + task + "\"}}";
  const std::string request = "POST /v1/a2a HTTP/1.1\r\nHost: " + o.host + ":" +
                              std::to_string(o.port) +
                              "\r\nContent-Type: application/json\r\nAccept: text/event-stream"
                              // A subscriber counts its stream ended at EOF: since a2ad keeps the
                              // connection after a stream's last chunk (HTTP/1.1 keep-alive), it
                              // must ask for the close, or every stream looks "not closed".
                              "\r\nConnection: close\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;

  // Workers.
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  {
    int first = 0;
    for (int w = 0; w < o.threads; ++w) {
      int count = o.subscribers / o.threads + (w < o.subscribers % o.threads ? 1 : 0);
      int conc = std::max(1, o.connect_concurrency / o.threads);
      workers.push_back(std::make_unique<Worker>(o, sh, request, first, count, conc));
      first += count;
    }
  }
  const auto t_connect = Clock::now();
  const int64_t connect_busy0 = MachineBusyTicks();
  const int64_t connect_srv0 = ProcCpuTicks(o.server_pid);
  const double connect_cli0 = SelfCpuSeconds();
  for (auto& w : workers) threads.emplace_back([&w] { w->Run(); });

  // Phase 1: attach everyone.
  int last_progress = 0;
  auto last_progress_at = Clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    sample_rss();
    int a = sh.attached.load(), f = sh.failed_connect.load();
    if (a + f >= o.subscribers) break;
    if (a + f != last_progress) {
      last_progress = a + f;
      last_progress_at = Clock::now();
    }
    if (Clock::now() - t_connect > std::chrono::seconds(o.connect_timeout_s) ||
        Clock::now() - last_progress_at > std::chrono::seconds(20)) {
      log("connect phase stalled/timed out: attached " + std::to_string(a) + ", failed " +
          std::to_string(f));
      break;
    }
  }
  const double connect_s = std::chrono::duration<double>(Clock::now() - t_connect).count();
  const int attached = sh.attached.load();
  const long hz = sysconf(_SC_CLK_TCK);
  // What the rest of the machine ran during the subscribe phase, % of one core.
  const double connect_other_cpu_pct =
      connect_s > 0
          ? std::max(0.0, 100.0 *
                              (static_cast<double>(MachineBusyTicks() - connect_busy0 -
                                                   ProcCpuTicks(o.server_pid) + connect_srv0) /
                                   static_cast<double>(hz) -
                               (SelfCpuSeconds() - connect_cli0)) /
                              connect_s)
          : 0;
  const int64_t rss_attached = sample_rss();
  log("attached " + std::to_string(attached) + "/" + std::to_string(o.subscribers) + " in " +
      std::to_string(connect_s) + " s; server RSS " + std::to_string(rss_attached / 1024) + " MB");

  // Phase 2: measure --ticks ticks emitted from now on.
  const int64_t ready = NowUs();
  sh.ready_us.store(ready);
  const int64_t cpu_srv0 = ProcCpuTicks(o.server_pid);
  const double cpu_cli0 = SelfCpuSeconds();
  const int64_t busy0 = MachineBusyTicks();
  const auto t_ready = Clock::now();
  int k0 = -1;
  bool measured_all = false;
  const auto run_deadline =
      t_ready + std::chrono::milliseconds(static_cast<int64_t>(o.ticks + 2) * o.interval_ms) +
      std::chrono::seconds(o.run_timeout_s);
  int64_t t_last_us = 0;
  while (attached > 0 && Clock::now() < run_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    sample_rss();
    if (k0 < 0) {
      for (int t = sh.max_snapshot_tick.load() + 1; t < kMaxTicks; ++t) {
        int64_t em = sh.tick_emitted[static_cast<size_t>(t)].load();
        if (em == 0) break;
        if (em >= ready) {
          k0 = t;
          break;
        }
      }
      if (k0 < 0) continue;
    }
    const int last = k0 + o.ticks - 1;
    if (last >= kMaxTicks) break;
    const int live = attached - sh.closed_early.load() - sh.finished.load();
    if (sh.tick_count[static_cast<size_t>(last)].load() >= live) {
      t_last_us = NowUs();
      measured_all = true;
      break;
    }
    if (live <= 0) break;  // every stream ended (task finished on its own, or all dropped)
  }
  if (t_last_us == 0) t_last_us = NowUs();
  const int64_t cpu_srv1 = ProcCpuTicks(o.server_pid);
  const double cpu_cli1 = SelfCpuSeconds();
  const int64_t busy1 = MachineBusyTicks();
  const double window_s = std::chrono::duration<double>(Clock::now() - t_ready).count();
  if (!measured_all) log("measurement did not complete (timeout or streams ended)");

  // Phase 3: end the task; the server closes every stream after the terminal event.
  int cancel_failed = 0;
  if (own_task) {
    try {
      CancelTask(o, task);
    } catch (const std::exception& e) {
      // Said even with --quiet, and an error: without the cancel every stream stays open and
      // would only show as "not closed after cancel" (a refused cancel once hid that way).
      cancel_failed = 1;
      std::fprintf(stderr, "cancel failed: %s\n", e.what());
      sh.NoteError(std::string("cancel failed: ") + e.what());
    }
  }
  const auto t_end = Clock::now();
  while (Clock::now() - t_end < std::chrono::seconds(15)) {
    sample_rss();
    if (sh.finished.load() + sh.closed_early.load() >= sh.attached.load()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double drain_s = std::chrono::duration<double>(Clock::now() - t_end).count();
  const int not_closed =
      std::max(0, sh.attached.load() - sh.finished.load() - sh.closed_early.load());
  sh.stop.store(true);
  for (auto& w : workers) w->Stop();
  for (auto& t : threads) t.join();

  // ---- analysis ----
  WorkerStats tot;
  std::vector<int64_t> delivery_lat;
  std::vector<int64_t> tick_max(static_cast<size_t>(std::max(o.ticks, 1)), -1);
  std::vector<int> tick_n(static_cast<size_t>(std::max(o.ticks, 1)), 0);
  for (auto& w : workers) {
    auto& st = w->stats();
    tot.all_deliveries += st.all_deliveries;
    tot.gaps += st.gaps;
    tot.duplicates += st.duplicates;
    tot.keepalives += st.keepalives;
    tot.bytes += st.bytes;
    tot.status_updates += st.status_updates;
    for (const auto& d : st.deliveries) {
      if (k0 < 0 || d.tick < k0 || d.tick >= k0 + o.ticks) continue;
      delivery_lat.push_back(d.latency_us);
      auto i = static_cast<size_t>(d.tick - k0);
      tick_max[i] = std::max<int64_t>(tick_max[i], d.latency_us);
      ++tick_n[i];
    }
  }
  std::vector<int64_t> fanout;
  int64_t missing = 0;
  int64_t first_emit = k0 >= 0 ? sh.tick_emitted[static_cast<size_t>(k0)].load() : 0;
  for (size_t i = 0; i < tick_max.size(); ++i) {
    if (tick_max[i] >= 0) fanout.push_back(tick_max[i]);
    missing += std::max(0, attached - tick_n[i]);
  }
  const int64_t measured = static_cast<int64_t>(delivery_lat.size());
  // The ticker's actual spacing: its timer shares the server's threads, so it stretches when
  // the server is saturated.
  const int64_t last_emit =
      k0 >= 0 && o.ticks > 1 ? sh.tick_emitted[static_cast<size_t>(k0 + o.ticks - 1)].load() : 0;
  const double tick_interval_ms =
      first_emit > 0 && last_emit > first_emit
          ? static_cast<double>(last_emit - first_emit) / 1000.0 / (o.ticks - 1)
          : 0;
  const double span_s = first_emit > 0 ? static_cast<double>(t_last_us - first_emit) / 1e6 : 0;
  const double deliveries_per_s = span_s > 0 ? static_cast<double>(measured) / span_s : 0;
  const double srv_cpu_pct =
      o.server_pid > 0 && window_s > 0
          ? 100.0 * static_cast<double>(cpu_srv1 - cpu_srv0) / static_cast<double>(hz) / window_s
          : 0;
  const double cli_cpu_pct = window_s > 0 ? 100.0 * (cpu_cli1 - cpu_cli0) / window_s : 0;
  // Everything else the machine ran meanwhile (other processes, interrupts), % of one core.
  const double other_cpu_pct = window_s > 0
                                   ? std::max(0.0, 100.0 * static_cast<double>(busy1 - busy0) /
                                                           static_cast<double>(hz) / window_s -
                                                       srv_cpu_pct - cli_cpu_pct)
                                   : 0;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double per_sub_kb = attached > 0 ? static_cast<double>(rss_peak - rss_base) / attached : 0;
  const int errors = sh.failed_connect.load() + sh.closed_early.load() + sh.error_events.load() +
                     not_closed + cancel_failed;
  const bool ok = measured_all && errors == 0 && missing == 0 && tot.gaps == 0 &&
                  tot.duplicates == 0 && attached == o.subscribers;

  auto ms = [](double us) { return us / 1000.0; };
  std::printf("SSE fan-out: %d subscribers (%d attached) on task %s\n", o.subscribers, attached,
              task.c_str());
  std::printf(
      "  connect+snapshot phase: %.2f s (%.0f subscribes/s; rest of the machine %.0f%% of a "
      "core)\n",
      connect_s, connect_s > 0 ? attached / connect_s : 0, connect_other_cpu_pct);
  std::printf(
      "  measured ticks: %d (from tick %d, emitted every %.1f ms), %lld deliveries, %.0f "
      "deliveries/s\n",
      static_cast<int>(fanout.size()), k0, tick_interval_ms, static_cast<long long>(measured),
      deliveries_per_s);
  std::printf("  fan-out completion (last subscriber) p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
              ms(Percentile(fanout, 50)), ms(Percentile(fanout, 99)), ms(Percentile(fanout, 100)));
  std::printf("  per-delivery latency                 p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
              ms(Percentile(delivery_lat, 50)), ms(Percentile(delivery_lat, 99)),
              ms(Percentile(delivery_lat, 100)));
  std::printf(
      "  server RSS: base %.1f MB, all attached %.1f MB, peak %.1f MB -> %.1f KB/subscriber\n",
      rss_base / 1024.0, rss_attached / 1024.0, rss_peak / 1024.0, per_sub_kb);
  std::printf(
      "  CPU during measurement (%% of one core, %ld cores): server %.0f%%, client %.0f%%, "
      "everything else %.0f%%; client max RSS %.1f MB\n",
      sysconf(_SC_NPROCESSORS_ONLN), srv_cpu_pct, cli_cpu_pct, other_cpu_pct,
      ru.ru_maxrss / 1024.0);
  std::printf(
      "  errors: connect %d, closed early %d, error events %d, not closed after cancel %d "
      "(drain %.2f s); missing %lld, gaps %lld, duplicates %lld\n",
      sh.failed_connect.load(), sh.closed_early.load(), sh.error_events.load(), not_closed, drain_s,
      static_cast<long long>(missing), static_cast<long long>(tot.gaps),
      static_cast<long long>(tot.duplicates));
  for (const auto& e : sh.error_samples) std::printf("  error: %s\n", e.c_str());
  std::printf(
      "RESULT ok=%d n=%d attached=%d ticks=%d interval_ms=%d tick_interval_ms=%.1f connect_s=%.3f "
      "connect_other_cpu_pct=%.0f "
      "fanout_p50_ms=%.3f fanout_p99_ms=%.3f fanout_max_ms=%.3f delivery_p50_ms=%.3f "
      "delivery_p99_ms=%.3f deliveries=%lld deliveries_per_s=%.0f rss_base_mb=%.1f "
      "rss_attached_mb=%.1f rss_peak_mb=%.1f rss_per_sub_kb=%.2f server_cpu_pct=%.0f "
      "client_cpu_pct=%.0f other_cpu_pct=%.0f window_s=%.2f connect_errors=%d closed_early=%d "
      "error_events=%d not_closed=%d "
      "missing=%lld gaps=%lld duplicates=%lld\n",
      ok ? 1 : 0, o.subscribers, attached, static_cast<int>(fanout.size()), o.interval_ms,
      tick_interval_ms, connect_s, connect_other_cpu_pct, ms(Percentile(fanout, 50)),
      ms(Percentile(fanout, 99)), ms(Percentile(fanout, 100)), ms(Percentile(delivery_lat, 50)),
      ms(Percentile(delivery_lat, 99)), static_cast<long long>(measured), deliveries_per_s,
      rss_base / 1024.0, rss_attached / 1024.0, rss_peak / 1024.0, per_sub_kb, srv_cpu_pct,
      cli_cpu_pct, other_cpu_pct, window_s, sh.failed_connect.load(), sh.closed_early.load(),
      sh.error_events.load(), not_closed, static_cast<long long>(missing),
      static_cast<long long>(tot.gaps), static_cast<long long>(tot.duplicates));
  return ok ? 0 : 3;
}

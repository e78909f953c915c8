// Closed-loop HTTP/1.1 load generator for the JSON-RPC and HTTP+JSON (REST) scenarios in
// bench/RESULTS.md (bench/grpc_loadgen.cpp is its gRPC twin).
//
// C keep-alive connections each send one request, wait for the whole response (including an
// SSE body that ends with its last chunk or the connection), and send the next. Warm-up first,
// then a measured window of fixed length; every response completed inside the window is one
// latency sample (sorted at the end for p50/p99). CPU of the server process comes from
// /proc/<pid>/stat (utime + stime) at the window's edges, its peak RSS from VmHWM at the end;
// "other" CPU is the machine's busy time (/proc/stat) minus the server's and this process's.
//
//   a2ad_bench_loadgen --port P --body-file send.json --connections 16 --warmup-s 1 --duration-s 5
//       [--header 'A2A-Version: 1.0'] [--server-pid PID] [--db-pid POSTMASTER_PID]
//       [--expect completed]
//       [--seed-body-file send.json --seed 1000]   # then @ID@ in --body-file = a seeded task id
//       [--method GET --path '/a2a/rest/tasks/@ID@'] [--seed-path /a2a/rest/message:send]
//       [--tls-ca ca.pem]   # https: a TLS handshake per connection, the server verified
//
// Body and path templates: every "@SEQ@" becomes a 16-digit request counter (unique message
// ids), every "@RAND@" 16 hex digits that look random (the counter mixed with a seed taken at
// start: unique ids in no order, as UUIDv4 message ids are), every "@ID@" a task id taken
// round-robin from the seeded tasks (the "id" of the JSON-RPC result, of result.task for v1.0, or
// of the HTTP+JSON SendMessageResponse's task). A GET (--method GET) sends no body. The last line
// of stdout is "RESULT key=value ...".
//
// Loopback only: the host must be 127.0.0.1 (or ::1).
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "load_common.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string path = "/v1/a2a";
  std::string seed_path;  // empty: path
  http::verb method = http::verb::post;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string seed_body;
  int seed = 0;
  int connections = 1;
  double warmup_s = 1;
  double duration_s = 5;
  int server_pid = 0;
  int db_pid = 0;
  std::string expect;
  std::string label;
  std::string tls_ca;  // https when set: the CA (PEM file) the server's certificate chains to
};

using bench::ReplaceAll;

// The task id in a response: result.id (JSON-RPC, v0.3 Task), result.task.id (JSON-RPC, v1.0)
// or task.id (HTTP+JSON SendMessageResponse).
std::string TaskIdOf(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object()) return {};
  const auto* result = v.as_object().if_contains("result");
  if (!result) result = &v;
  if (!result->is_object()) return {};
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
  uint64_t rand_seed = 0;  // @RAND@: mixed with seq
  std::vector<std::string> ids;
  size_t next_id = 0;
  std::vector<uint32_t> latencies_us;  // measured window only
  uint64_t errors = 0, unexpected = 0, reconnects = 0, warmup_requests = 0;
  uint64_t bytes_in = 0;
  std::string first_error;
  int running = 0;
  ssl::context* tls = nullptr;  // --tls-ca
};

// A request's target and body from their templates: one @SEQ@ and one @ID@ for both.
struct Filled {
  std::string path, body;
};

Filled Fill(Shared& s, const std::string& path_tmpl, const std::string& body_tmpl) {
  Filled f{path_tmpl, body_tmpl};
  const bool has_seq =
      f.path.find("@SEQ@") != std::string::npos || f.body.find("@SEQ@") != std::string::npos;
  const bool has_id =
      f.path.find("@ID@") != std::string::npos || f.body.find("@ID@") != std::string::npos;
  const bool has_rand =
      f.path.find("@RAND@") != std::string::npos || f.body.find("@RAND@") != std::string::npos;
  if (has_rand) {
    // splitmix64's finalizer: a bijection, so distinct counters give distinct tokens.
    uint64_t z = s.rand_seed + 0x9e3779b97f4a7c15ull * ++s.seq;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    char token[32];
    std::snprintf(token, sizeof token, "%016" PRIx64, z);
    ReplaceAll(f.path, "@RAND@", token);
    ReplaceAll(f.body, "@RAND@", token);
  }
  if (has_seq) {
    char seq[32];
    std::snprintf(seq, sizeof seq, "%016" PRIu64, ++s.seq);
    ReplaceAll(f.path, "@SEQ@", seq);
    ReplaceAll(f.body, "@SEQ@", seq);
  }
  if (has_id && !s.ids.empty()) {
    ReplaceAll(f.path, "@ID@", s.ids[s.next_id]);
    ReplaceAll(f.body, "@ID@", s.ids[s.next_id]);
    s.next_id = (s.next_id + 1) % s.ids.size();
  }
  return f;
}

http::request<http::string_body> BuildRequest(const Options& opt, http::verb method,
                                              Filled filled) {
  http::request<http::string_body> req(method, filled.path, 11);
  req.set(http::field::host, opt.host + ":" + std::to_string(opt.port));
  if (method != http::verb::get) req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "application/json, text/event-stream");
  for (const auto& [name, value] : opt.headers) req.set(name, value);
  req.keep_alive(true);
  if (method != http::verb::get) {
    req.body() = std::move(filled.body);
    req.prepare_payload();
  }
  return req;
}

// One connection: send, read the whole response, repeat until the phase is kDone. Runs `count`
// requests when count > 0 (the seeding phase: a POST of the seed body to the seed path),
// collecting task ids.
asio::awaitable<void> Connection(Shared& s, const std::string* tmpl, int count, bool collect) {
  const Options& opt = *s.opt;
  auto exec = co_await asio::this_coro::executor;
  tcp::socket sock(exec);
  std::optional<ssl::stream<tcp::socket&>> secure;  // over `sock` with --tls-ca
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
      if (s.tls) {  // a new TLS session per connection, counted in this request's latency
        secure.emplace(sock, *s.tls);
        co_await secure->async_handshake(ssl::stream_base::client,
                                         asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
          ++s.errors;
          if (s.first_error.empty()) s.first_error = "TLS handshake: " + ec.message();
          sock.close(ec);
          continue;
        }
      }
      connected = true;
      buf.clear();
    }
    const bool seeding = count > 0;
    const std::string& path = seeding && !opt.seed_path.empty() ? opt.seed_path : opt.path;
    auto req = BuildRequest(opt, seeding ? http::verb::post : opt.method, Fill(s, path, *tmpl));
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    parser.header_limit(64 * 1024);
    if (secure) {
      co_await http::async_write(*secure, req, asio::redirect_error(asio::use_awaitable, ec));
      if (!ec)
        co_await http::async_read(*secure, buf, parser,
                                  asio::redirect_error(asio::use_awaitable, ec));
    } else {
      co_await http::async_write(sock, req, asio::redirect_error(asio::use_awaitable, ec));
      if (!ec)
        co_await http::async_read(sock, buf, parser, asio::redirect_error(asio::use_awaitable, ec));
    }
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

void Usage() {
  std::fprintf(stderr,
               "usage: a2ad_bench_loadgen --port P --body-file F [--host 127.0.0.1] [--path "
               "/v1/a2a]\n  [--header 'Name: value']... [--connections C] [--warmup-s S] "
               "[--duration-s S]\n  [--server-pid PID] [--db-pid POSTMASTER_PID] [--expect SUBSTRING] [--seed-body-file F "
               "--seed N] [--label TEXT]\n  [--method GET|POST] [--seed-path PATH] [--tls-ca "
               "PEM]\n");
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
    else if (a == "--seed-path")
      opt.seed_path = next();
    else if (a == "--method") {
      const auto m = next();
      if (m != "GET" && m != "POST") Usage();
      opt.method = m == "GET" ? http::verb::get : http::verb::post;
    } else if (a == "--header") {
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
    else if (a == "--db-pid")
      opt.db_pid = std::stoi(next());
    else if (a == "--expect")
      opt.expect = next();
    else if (a == "--label")
      opt.label = next();
    else if (a == "--tls-ca")
      opt.tls_ca = next();
    else
      Usage();
  }
  if (opt.port == 0 || (body_file.empty() && opt.method != http::verb::get) || opt.connections < 1)
    Usage();
  if (opt.host != "127.0.0.1" && opt.host != "::1") {
    std::fprintf(stderr, "loopback only: --host must be 127.0.0.1 or ::1\n");
    return 2;
  }
  if (!body_file.empty()) opt.body = bench::ReadFile(body_file);
  if (!seed_file.empty()) opt.seed_body = bench::ReadFile(seed_file);
  bench::RaiseFileLimit();

  asio::io_context io(1);
  Shared s;
  s.opt = &opt;
  s.rand_seed = (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  s.endpoint = tcp::endpoint(asio::ip::make_address(opt.host), opt.port);
  ssl::context tls(ssl::context::tls_client);
  if (!opt.tls_ca.empty()) {
    tls.load_verify_file(opt.tls_ca);
    tls.set_verify_mode(ssl::verify_peer);
    s.tls = &tls;
  }

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

  bench::Outcome out;
  Clock::time_point m0, m1;
  asio::steady_timer phase_timer(io);
  phase_timer.expires_after(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.warmup_s)));
  phase_timer.async_wait([&](boost::system::error_code) {
    s.phase = Phase::kMeasure;
    m0 = Clock::now();
    out.start = bench::Probe::Take(opt.server_pid, opt.db_pid);
    phase_timer.expires_after(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.duration_s)));
    phase_timer.async_wait([&](boost::system::error_code) {
      s.phase = Phase::kDone;
      m1 = Clock::now();
      out.end = bench::Probe::Take(opt.server_pid, opt.db_pid);
    });
  });
  io.run();

  if (!s.first_error.empty()) std::fprintf(stderr, "first error: %s\n", s.first_error.c_str());
  out.label = opt.label;
  out.connections = opt.connections;
  out.latencies_us = std::move(s.latencies_us);
  out.window_s = std::chrono::duration<double>(m1 - m0).count();
  out.errors = s.errors;
  out.unexpected = s.unexpected;
  out.reconnects = s.reconnects;
  out.server_pid = opt.server_pid;
  out.db_pid = opt.db_pid;
  out.seeded = s.ids.size();
  bench::PrintResult(out);
  return 0;
}

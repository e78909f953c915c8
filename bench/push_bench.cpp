// Push delivery benchmark (bench/RESULTS.md "Push notifications"). Run by hand through
// bench/run_push.sh, never by `make test`.
//
// Against a running `a2ad serve` (started with the loopback allow-list), this client:
//   - runs a webhook receiver on 127.0.0.1:<ephemeral> (Beast, one I/O thread, answers 200),
//   - creates N echo tasks with `message/send` (return immediately), each carrying an inline
//     push config pointing at the receiver, from C concurrent connections,
//   - records, per push, the receipt time (system clock) and the task's status timestamp
//     from the push body (the commit time of the state change, same machine clock).
// It prints: pushes/s from the first send to the last push received (every push is signed
// ES256 by the server), and the latency state change -> push received, p50/p90/p99/max.
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "2026-01-01T10:00:00.123Z" -> epoch ms (UTC).
int64_t ParseTimestampMs(const std::string& ts) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(ts.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) < 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

struct Receipt {
  int64_t received_us;
  int64_t changed_ms;
};

std::mutex g_mu;
std::vector<Receipt> g_receipts;
std::atomic<size_t> g_count{0};
std::atomic<size_t> g_bad{0};

asio::awaitable<void> Serve(tcp::socket sock) {
  beast::flat_buffer buf;
  for (;;) {
    http::request<http::string_body> req;
    auto [ec, n] = co_await http::async_read(sock, buf, req, asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    const int64_t at = NowUs();
    boost::system::error_code jec;
    json::value body = json::parse(req.body(), jec);
    int64_t changed = 0;
    if (!jec && body.is_object()) {
      const json::value* st = nullptr;
      if (auto* su = body.as_object().if_contains("statusUpdate"))
        st = su->as_object().if_contains("status");
      else
        st = body.as_object().if_contains("status");
      if (st && st->is_object())
        if (auto* ts = st->as_object().if_contains("timestamp"); ts && ts->is_string())
          changed = ParseTimestampMs(std::string(ts->get_string()));
    }
    if (req[http::field::authorization].substr(0, 7) != "Bearer ") ++g_bad;
    {
      std::lock_guard lock(g_mu);
      g_receipts.push_back({at, changed});
    }
    ++g_count;
    http::response<http::string_body> res(http::status::ok, 11);
    res.body() = "{}";
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    auto [wec, wn] = co_await http::async_write(sock, res, asio::as_tuple(asio::use_awaitable));
    if (wec || !req.keep_alive()) co_return;
  }
}

asio::awaitable<void> Accept(tcp::acceptor& acceptor) {
  for (;;) {
    auto [ec, sock] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    asio::co_spawn(acceptor.get_executor(), Serve(std::move(sock)), asio::detached);
  }
}

std::string SetBody(const std::string& task_id, int k, const std::string& hook) {
  json::object push{{"url", hook}, {"token", "bench"}, {"id", "c" + std::to_string(k)}};
  json::object params{{"taskId", task_id}, {"pushNotificationConfig", push}};
  return json::serialize(json::object{{"jsonrpc", "2.0"},
                                      {"id", k},
                                      {"method", "tasks/pushNotificationConfig/set"},
                                      {"params", params}});
}

std::string SendBody(int i, const std::string& hook) {
  json::object push{{"url", hook}, {"token", "bench"}, {"id", "c0"}};
  json::object msg{{"kind", "message"},
                   {"role", "user"},
                   {"messageId", "bench-" + std::to_string(i)},
                   {"parts", json::array{json::object{{"kind", "text"}, {"text", "x"}}}}};
  json::object params{
      {"message", msg},
      {"configuration", json::object{{"blocking", false}, {"pushNotificationConfig", push}}}};
  return json::serialize(
      json::object{{"jsonrpc", "2.0"}, {"id", i}, {"method", "message/send"}, {"params", params}});
}

double Pct(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  int port = 0;
  int n = 2000;
  int conc = 8;
  int configs = 1;  // push configs per task (> 1: the server must delay completion)
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--port") port = std::stoi(argv[i + 1]);
    if (a == "--tasks") n = std::stoi(argv[i + 1]);
    if (a == "--concurrency") conc = std::stoi(argv[i + 1]);
    if (a == "--configs") configs = std::stoi(argv[i + 1]);
  }
  if (port == 0) {
    std::cerr << "usage: a2ad_bench_push --port P [--tasks N] [--concurrency C]\n";
    return 2;
  }
  asio::io_context rx_io(1);
  tcp::acceptor acceptor(rx_io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const std::string hook =
      "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/hook";
  asio::co_spawn(rx_io, Accept(acceptor), asio::detached);
  std::thread rx_thread([&] { rx_io.run(); });

  const int64_t start_us = NowUs();
  std::atomic<int> next{0};
  std::atomic<int> failed_sends{0};
  std::vector<std::thread> senders;
  for (int c = 0; c < conc; ++c) {
    senders.emplace_back([&] {
      asio::io_context io;
      tcp::socket sock(io);
      sock.connect(tcp::endpoint(asio::ip::make_address(host), static_cast<uint16_t>(port)));
      beast::flat_buffer buf;
      for (int i = next++; i < n; i = next++) {
        http::request<http::string_body> req(http::verb::post, "/v1/a2a", 11);
        req.set(http::field::host, host);
        req.set(http::field::content_type, "application/json");
        req.body() = SendBody(i, hook);
        req.prepare_payload();
        http::write(sock, req);
        http::response<http::string_body> res;
        http::read(sock, buf, res);
        if (res.body().find("\"result\"") == std::string::npos) {
          ++failed_sends;
          continue;
        }
        std::string task_id;
        if (configs > 1) {
          json::value v = json::parse(res.body());
          task_id = std::string(v.at("result").at("id").as_string());
        }
        for (int k = 1; k < configs; ++k) {
          http::request<http::string_body> set(http::verb::post, "/v1/a2a", 11);
          set.set(http::field::host, host);
          set.set(http::field::content_type, "application/json");
          set.body() = SetBody(task_id, k, hook);
          set.prepare_payload();
          http::write(sock, set);
          http::response<http::string_body> sres;
          http::read(sock, buf, sres);
          if (sres.body().find("\"result\"") == std::string::npos) ++failed_sends;
        }
      }
    });
  }
  for (auto& t : senders) t.join();
  const int64_t sent_us = NowUs();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  const size_t expected = static_cast<size_t>(n) * static_cast<size_t>(configs);
  while (g_count.load() < expected && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  rx_io.stop();
  rx_thread.join();

  std::vector<double> lat;
  int64_t last_us = start_us;
  int64_t first_us = g_receipts.empty() ? start_us : g_receipts.front().received_us;
  for (const auto& r : g_receipts) {
    last_us = std::max(last_us, r.received_us);
    first_us = std::min(first_us, r.received_us);
    if (r.changed_ms > 0)
      lat.push_back(static_cast<double>(r.received_us) / 1000.0 -
                    static_cast<double>(r.changed_ms));
  }
  std::sort(lat.begin(), lat.end());
  const double secs = static_cast<double>(last_us - start_us) / 1e6;
  const double window = std::max(1e-6, static_cast<double>(last_us - first_us) / 1e6);
  std::printf(
      "tasks=%d configs=%d concurrency=%d received=%zu failed_sends=%d unsigned=%zu "
      "send_phase_s=%.2f total_s=%.2f pushes_per_s=%.0f receive_window_s=%.2f "
      "window_pushes_per_s=%.0f latency_ms p50=%.1f p90=%.1f p99=%.1f max=%.1f\n",
      n, configs, conc, g_count.load(), failed_sends.load(), g_bad.load(),
      static_cast<double>(sent_us - start_us) / 1e6, secs,
      static_cast<double>(g_count.load()) / secs, window,
      static_cast<double>(g_count.load()) / window, Pct(lat, 0.5), Pct(lat, 0.9), Pct(lat, 0.99),
      lat.empty() ? 0.0 : lat.back());
  return g_count.load() == expected ? 0 : 1;
}

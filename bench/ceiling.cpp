// The machine's ceiling for the JSON-RPC benchmarks (bench/RESULTS.md): a minimal Boost.Beast
// HTTP/1.1 server that reads each request, parses its JSON body, and answers a JSON-RPC result
// of the same size and shape as a2ad's completed echo task, with the request's id. No store, no
// task, no protocol checks: what is left is the cost of HTTP, JSON parsing and serialization on
// the same library stack and thread layout as a2ad (one io_context, one thread per core, a
// strand per connection).
//
//   a2ad_bench_ceiling [--listen-port 0] [--threads N]
//
// Binds 127.0.0.1 only. When ready, prints "ceiling: serving http://127.0.0.1:PORT/" on stdout.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

namespace {

// A completed task with one echo artifact: the shape a2ad returns for message/send.
json::value MakeResult() {
  return json::parse(R"({"kind":"task","id":"01900000-0000-7000-8000-000000000000",
    "contextId":"01900000-0000-7000-8000-000000000001",
    "status":{"state":"completed","timestamp":"2026-01-01T00:00:00.000Z"},
    "artifacts":[{"artifactId":"01900000-0000-7000-8000-000000000000-echo","name":"echo",
      "parts":[{"kind":"text","text":"hello from the load generator"}]}],
    "history":[{"kind":"message","role":"user","messageId":"m-0000000000000001",
      "taskId":"01900000-0000-7000-8000-000000000000",
      "contextId":"01900000-0000-7000-8000-000000000001",
      "parts":[{"kind":"text","text":"hello from the load generator"}]}]})");
}

asio::awaitable<void> Session(tcp::socket sock, const json::value& result) {
  beast::flat_buffer buf;
  for (;;) {
    http::request<http::string_body> req;
    auto [ec, n] = co_await http::async_read(sock, buf, req, asio::as_tuple(asio::use_awaitable));
    (void)n;
    if (ec) break;
    http::response<http::string_body> res(http::status::ok, req.version());
    res.set(http::field::server, "ceiling");
    res.set(http::field::content_type, "application/json");
    boost::system::error_code jec;
    auto body = json::parse(req.body(), jec);
    json::object out;
    out["jsonrpc"] = "2.0";
    if (!jec && body.is_object()) {
      if (auto* id = body.as_object().if_contains("id")) out["id"] = *id;
      out["result"] = result;
    } else {
      out["id"] = nullptr;
      out["error"] = json::parse(R"({"code":-32700,"message":"parse error"})");
    }
    res.body() = json::serialize(out);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    auto [wec, wn] = co_await http::async_write(sock, res, asio::as_tuple(asio::use_awaitable));
    (void)wn;
    if (wec || !req.keep_alive()) break;
  }
  boost::system::error_code ignored;
  sock.shutdown(tcp::socket::shutdown_both, ignored);
}

asio::awaitable<void> Accept(asio::io_context& io, tcp::acceptor& acceptor,
                             const json::value& result) {
  for (;;) {
    auto [ec, sock] =
        co_await acceptor.async_accept(asio::make_strand(io), asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) continue;
    boost::system::error_code ignored;
    sock.set_option(tcp::no_delay(true), ignored);
    auto exec = sock.get_executor();
    asio::co_spawn(exec, Session(std::move(sock), result), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  unsigned short port = 0;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--listen-port")
      port = static_cast<unsigned short>(std::stoi(argv[i + 1]));
    else if (a == "--threads")
      threads = static_cast<unsigned>(std::stoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: a2ad_bench_ceiling [--listen-port P] [--threads N]\n");
      return 2;
    }
  }
  const json::value result = MakeResult();
  asio::io_context io(static_cast<int>(threads));
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  std::printf("ceiling: serving http://127.0.0.1:%u/\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  asio::co_spawn(io, Accept(io, acceptor, result), asio::detached);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code, int) { io.stop(); });
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  return 0;
}

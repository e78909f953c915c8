#include "a2ad/push/webhook_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>

namespace a2ad::push {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using asio::use_awaitable;

namespace {
constexpr auto kTuple = asio::as_tuple(use_awaitable);

WebhookOutcome Fail(std::string why, int status = 0) {
  WebhookOutcome o;
  o.status = status;
  o.error = std::move(why);
  return o;
}

WebhookOutcome Judge(int status) {
  if (status >= 200 && status < 300) {
    WebhookOutcome o;
    o.delivered = true;
    o.status = status;
    return o;
  }
  if (status >= 300 && status < 400)
    return Fail("redirect (" + std::to_string(status) + ") not followed", status);
  return Fail("HTTP " + std::to_string(status), status);
}

http::request<http::string_body> BuildRequest(
    const VettedTarget& target, std::string body,
    std::vector<std::pair<std::string, std::string>>& headers, const std::string& user_agent) {
  http::request<http::string_body> req(http::verb::post, target.url.target, 11);
  req.set(http::field::host, target.url.HostHeader());
  req.set(http::field::user_agent, user_agent);
  req.set(http::field::connection, "close");
  for (auto& [name, value] : headers) req.set(name, value);
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

// Connect (each endpoint gets the connect timeout), bounded by the overall deadline.
template <class Stream>
asio::awaitable<std::string> ConnectPinned(Stream& tcp, const VettedTarget& target,
                                           std::chrono::steady_clock::time_point deadline,
                                           std::chrono::milliseconds connect_timeout) {
  std::string last = "no endpoint";
  for (const auto& ep : target.endpoints) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) co_return std::string("timed out");
    tcp.expires_after(std::min(left, connect_timeout));
    auto [ec] = co_await tcp.async_connect(ep, kTuple);
    if (!ec) co_return std::string();
    last = "connect to " + ep.address().to_string() + ":" + std::to_string(ep.port()) + ": " +
           (ec == beast::error::timeout ? std::string("timed out") : ec.message());
    tcp.close();
  }
  co_return last;
}

}  // namespace

struct WebhookClient::Tls {
  ssl::context ctx{ssl::context::tls_client};
  // The system trust store is loaded at the first https delivery, not at startup: parsing
  // the CA bundle costs ~40 ms, most of a2ad's start, and many servers never push over TLS.
  std::once_flag system_roots;
};

WebhookClient::WebhookClient(WebhookClientOptions options)
    : options_(std::move(options)), tls_(std::make_unique<Tls>()) {
  // An extra CA file is loaded now, so a wrong --push-ca-file fails at startup.
  if (!options_.ca_file.empty()) tls_->ctx.load_verify_file(options_.ca_file);
  tls_->ctx.set_verify_mode(ssl::verify_peer);
  tls_->ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
}

WebhookClient::~WebhookClient() = default;

asio::awaitable<WebhookOutcome> WebhookClient::Post(
    const VettedTarget& target, std::string body,
    std::vector<std::pair<std::string, std::string>> headers) {
  auto executor = co_await asio::this_coro::executor;
  const auto deadline = std::chrono::steady_clock::now() + options_.total_timeout;
  auto remaining = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return std::max(left, std::chrono::milliseconds(1));
  };
  auto req = BuildRequest(target, std::move(body), headers, options_.user_agent);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(options_.max_response_bytes);
  parser.header_limit(16 * 1024);

  auto timeout_text = [](const boost::system::error_code& ec) {
    return ec == beast::error::timeout ? std::string("timed out") : ec.message();
  };

  if (target.url.scheme == "https") {
    std::call_once(tls_->system_roots, [this] {
      boost::system::error_code ignored;  // no system store: only --push-ca-file is trusted
      tls_->ctx.set_default_verify_paths(ignored);
    });
    beast::ssl_stream<beast::tcp_stream> stream(executor, tls_->ctx);
    std::string failed = co_await ConnectPinned(beast::get_lowest_layer(stream), target, deadline,
                                                options_.connect_timeout);
    if (!failed.empty()) co_return Fail(failed);
    if (!target.url.literal) {
      if (!SSL_set_tlsext_host_name(stream.native_handle(), target.url.host.c_str()))
        co_return Fail("TLS: cannot set SNI");
    }
    stream.set_verify_callback(ssl::host_name_verification(target.url.host));
    beast::get_lowest_layer(stream).expires_after(remaining());
    if (auto [ec] = co_await stream.async_handshake(ssl::stream_base::client, kTuple); ec)
      co_return Fail("TLS handshake: " + timeout_text(ec));
    beast::get_lowest_layer(stream).expires_after(remaining());
    if (auto [ec, n] = co_await http::async_write(stream, req, kTuple); ec)
      co_return Fail("write: " + timeout_text(ec));
    beast::get_lowest_layer(stream).expires_after(remaining());
    if (auto [ec, n] = co_await http::async_read(stream, buffer, parser, kTuple); ec)
      co_return Fail("read response: " + timeout_text(ec));
    beast::get_lowest_layer(stream).expires_after(std::chrono::milliseconds(500));
    (void)co_await stream.async_shutdown(kTuple);
    co_return Judge(parser.get().result_int());
  }

  beast::tcp_stream stream(executor);
  std::string failed = co_await ConnectPinned(stream, target, deadline, options_.connect_timeout);
  if (!failed.empty()) co_return Fail(failed);
  stream.expires_after(remaining());
  if (auto [ec, n] = co_await http::async_write(stream, req, kTuple); ec)
    co_return Fail("write: " + timeout_text(ec));
  stream.expires_after(remaining());
  if (auto [ec, n] = co_await http::async_read(stream, buffer, parser, kTuple); ec)
    co_return Fail("read response: " + timeout_text(ec));
  boost::system::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  co_return Judge(parser.get().result_int());
}

}  // namespace a2ad::push

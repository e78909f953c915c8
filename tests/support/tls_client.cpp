#include "tls_client.hpp"

#include <openssl/ssl.h>
#include <strings.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <optional>

namespace a2ad::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

struct TlsHttpClient::Impl {
  uint16_t port;
  TlsClientOptions opts;
  asio::io_context io;
  ssl::context ctx{ssl::context::tls_client};
  std::optional<ssl::stream<tcp::socket>> stream;
  beast::flat_buffer buf;

  void Close() {
    if (!stream) return;
    boost::system::error_code ec;
    stream->lowest_layer().close(ec);
    stream.reset();
  }
};

TlsHttpClient::TlsHttpClient(uint16_t port, TlsClientOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->port = port;
  impl_->opts = std::move(options);
  auto& ctx = impl_->ctx;
  ctx.add_certificate_authority(asio::buffer(impl_->opts.ca_pem));
  ctx.set_verify_mode(ssl::verify_peer);
  if (!impl_->opts.cert_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(impl_->opts.cert_pem));
    ctx.use_private_key(asio::buffer(impl_->opts.key_pem), ssl::context::pem);
  }
}

TlsHttpClient::~TlsHttpClient() { impl_->Close(); }

void TlsHttpClient::Connect() {
  if (impl_->stream) return;
  impl_->buf.clear();
  impl_->stream.emplace(impl_->io, impl_->ctx);
  auto& s = *impl_->stream;
  s.set_verify_callback(ssl::host_name_verification(impl_->opts.verify_name));
  SSL_set_tlsext_host_name(s.native_handle(), impl_->opts.verify_name.c_str());
  try {
    s.lowest_layer().connect(tcp::endpoint(asio::ip::make_address(impl_->opts.host), impl_->port));
    s.handshake(ssl::stream_base::client);
  } catch (...) {
    impl_->Close();
    throw;
  }
}

ClientResponse TlsHttpClient::Request(const std::string& method, const std::string& target,
                                      const std::string& body,
                                      std::vector<std::pair<std::string, std::string>> headers) {
  Connect();
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, impl_->opts.verify_name);
  bool has_ct = false;
  for (auto& [k, v] : headers) {
    if (strcasecmp(k.c_str(), "content-type") == 0) has_ct = true;
    req.set(k, v);
  }
  if (!body.empty() && !has_ct) req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();
  ClientResponse out;
  try {
    http::write(*impl_->stream, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    http::read(*impl_->stream, impl_->buf, parser);
    auto res = parser.release();
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res)
      out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    out.body = std::move(res.body());
    out.keep_alive = res.keep_alive();
  } catch (...) {
    impl_->Close();
    throw;
  }
  if (!out.keep_alive) impl_->Close();
  if (out.Header("Content-Type").find("json") != std::string::npos && !out.body.empty())
    (void)StrictJson(out.body, "JSON response body");
  return out;
}

ClientResponse TlsHttpClient::Rpc(const std::string& method, const json::value& params,
                                  std::vector<std::pair<std::string, std::string>> headers) {
  json::object o{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
  return Request("POST", "/v1/a2a", json::serialize(o), std::move(headers));
}

std::string TlsHttpClient::protocol_version() const {
  if (!impl_->stream) return {};
  return SSL_get_version(impl_->stream->native_handle());
}

}  // namespace a2ad::testing

#include "webhook_receiver.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

namespace a2ad::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string ReceivedRequest::Header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return {};
}

WebhookReceiver::WebhookReceiver() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 128) != 0)
    throw std::runtime_error("webhook receiver: cannot listen");
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

WebhookReceiver::~WebhookReceiver() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  ::close(listen_fd_);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

WebhookReceiver::WebhookReceiver(const CertAndKey& tls) : WebhookReceiver() {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  ctx->use_certificate_chain(asio::buffer(tls.cert_pem));
  ctx->use_private_key(asio::buffer(tls.key_pem), asio::ssl::context::pem);
  std::lock_guard lock(mu_);  // before any connection is served (Serve reads it under mu_)
  tls_ = std::move(ctx);
}

std::string WebhookReceiver::Url(const std::string& path) const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
}

size_t WebhookReceiver::failed_handshakes() {
  std::lock_guard lock(mu_);
  return failed_handshakes_;
}

void WebhookReceiver::Script(std::vector<int> statuses) {
  std::lock_guard lock(mu_);
  script_.assign(statuses.begin(), statuses.end());
}
void WebhookReceiver::SetDefaultStatus(int status) {
  std::lock_guard lock(mu_);
  default_status_ = status;
}
void WebhookReceiver::SetDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  delay_ = delay;
}
void WebhookReceiver::SetLocation(std::string location) {
  std::lock_guard lock(mu_);
  location_ = std::move(location);
}

void WebhookReceiver::SetResponse(std::string body,
                                  std::vector<std::pair<std::string, std::string>> headers) {
  std::lock_guard lock(mu_);
  body_ = std::move(body);
  extra_headers_ = std::move(headers);
}

size_t WebhookReceiver::WaitFor(size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
  return requests_.size();
}

std::vector<ReceivedRequest> WebhookReceiver::requests() {
  std::lock_guard lock(mu_);
  return requests_;
}

size_t WebhookReceiver::count() {
  std::lock_guard lock(mu_);
  return requests_.size();
}

void WebhookReceiver::Accept() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard lock(mu_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) continue;
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void WebhookReceiver::Serve(int fd) {
  asio::io_context io;
  asio::ip::tcp::socket sock(io, asio::ip::tcp::v4(), fd);
  std::shared_ptr<asio::ssl::context> tls;
  {
    std::lock_guard lock(mu_);
    tls = tls_;
  }
  if (tls) {
    asio::ssl::stream<asio::ip::tcp::socket&> stream(sock, *tls);
    boost::system::error_code ec;
    stream.handshake(asio::ssl::stream_base::server, ec);
    if (ec) {
      std::lock_guard lock(mu_);
      ++failed_handshakes_;
    } else {
      Exchange(stream);
      stream.shutdown(ec);
    }
  } else {
    Exchange(sock);
  }
  boost::system::error_code ignored;
  sock.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

template <class Stream>
void WebhookReceiver::Exchange(Stream& sock) {
  beast::flat_buffer buf;
  for (;;) {
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(sock, buf, req, ec);
    if (ec) break;
    ReceivedRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    for (const auto& f : req)
      r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    r.body = req.body();
    int status;
    std::chrono::milliseconds delay;
    std::string location, body;
    std::vector<std::pair<std::string, std::string>> extra;
    {
      std::lock_guard lock(mu_);
      body = body_;
      extra = extra_headers_;
      status = default_status_;
      if (!script_.empty()) {
        status = script_.front();
        script_.pop_front();
      }
      delay = delay_;
      location = location_;
    }
    {
      std::lock_guard lock(mu_);
      requests_.push_back(std::move(r));
    }
    cv_.notify_all();
    if (delay.count() > 0) {  // cut short when the receiver is destroyed
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, delay, [this] { return stopping_; });
    }
    http::response<http::string_body> res(static_cast<http::status>(status), 11);
    if (!location.empty() && status >= 300 && status < 400)
      res.set(http::field::location, location);
    res.keep_alive(req.keep_alive());
    res.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : extra) res.set(k, v);
    res.body() = body;
    res.prepare_payload();
    http::write(sock, res, ec);
    if (ec || !req.keep_alive()) break;
  }
}

}  // namespace a2ad::testing

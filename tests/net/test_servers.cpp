#include "test_servers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "wait_for.hpp"

namespace a2ad::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

namespace {

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test CA: ") + what);
}

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  Check(key != nullptr, "EC key");
  return key;
}

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Check(ext != nullptr, "extension");
  Check(X509_add_ext(cert, ext, -1) == 1, "add extension");
  X509_EXTENSION_free(ext);
}

// A certificate for `subject_key`, signed by `issuer_key` (issuer nullptr: self-signed).
X509* NewCert(const char* cn, EVP_PKEY* subject_key, X509* issuer, EVP_PKEY* issuer_key,
              long serial) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, subject_key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert;
  if (!issuer) {
    AddExt(cert, signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    AddExt(cert, signer, NID_subject_key_identifier, "hash");
  } else {
    AddExt(cert, signer, NID_basic_constraints, "critical,CA:FALSE");
    AddExt(cert, signer, NID_key_usage, "critical,digitalSignature");
    AddExt(cert, signer, NID_ext_key_usage, "serverAuth");
    AddExt(cert, signer, NID_subject_alt_name, "DNS:hooks.test,IP:127.0.0.1");
    AddExt(cert, signer, NID_authority_key_identifier, "keyid");
  }
  Check(X509_sign(cert, issuer_key, EVP_sha256()) > 0, "sign");
  return cert;
}

std::string Pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string Pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

TestCa MakeCa() {
  TestCa out;
  EVP_PKEY* ca_key = NewKey();
  X509* ca = NewCert("a2ad test CA", ca_key, nullptr, ca_key, 1);
  EVP_PKEY* key = NewKey();
  X509* cert = NewCert("hooks.test", key, ca, ca_key, 2);
  out.ca_pem = Pem(ca);
  out.cert_pem = Pem(cert);
  out.key_pem = Pem(key);
  X509_free(cert);
  X509_free(ca);
  EVP_PKEY_free(key);
  EVP_PKEY_free(ca_key);
  out.ca_file = (std::filesystem::temp_directory_path() /
                 ("a2ad-test-ca-" + std::to_string(::getpid()) + ".pem"))
                    .string();
  std::ofstream(out.ca_file) << out.ca_pem;
  return out;
}

bool IEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// Requests in, answers out, on any stream: `answers` of them, the last with Connection:
// close unless `then_drop` (then one more request is read, recorded and left unanswered).
template <class Stream>
void Exchange(Stream& stream, SeenRequest seen,
              const std::function<Reply(const SeenRequest&)>& handler,
              const std::function<void(SeenRequest)>& record, int answers = 1,
              bool then_drop = false) {
  beast::flat_buffer buffer;
  for (int i = 0; i < answers + (then_drop ? 1 : 0); ++i) {
    seen.headers.clear();
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(stream, buffer, req, ec);
    if (ec) return;
    seen.method = std::string(req.method_string());
    seen.target = std::string(req.target());
    for (const auto& f : req)
      seen.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    seen.body = req.body();
    record(seen);
    if (i == answers) return;  // the dropped one
    Reply reply = handler ? handler(seen) : Reply{};
    if (reply.delay.count() > 0) std::this_thread::sleep_for(reply.delay);
    http::response<http::string_body> res(static_cast<http::status>(reply.status), 11);
    for (const auto& [k, v] : reply.headers) res.set(k, v);
    if (i + 1 == answers && !then_drop) res.set(http::field::connection, "close");
    res.body() = reply.body;
    res.prepare_payload();
    http::write(stream, res, ec);
    if (ec) return;
  }
}

}  // namespace

net::EgressPolicy LoopbackPolicy(bool allow_http) {
  net::EgressPolicy p;
  p.allow_http = allow_http;
  p.allow_list = {"127.0.0.1/32"};
  p.ca_file = TestCa::Get().ca_file;
  return p;
}

const TestCa& TestCa::Get() {
  static const TestCa ca = MakeCa();
  static const struct Remover {  // destroyed before `ca`: the file goes at exit
    std::string path;
    ~Remover() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } remover{ca.ca_file};
  return ca;
}

std::string SeenRequest::Header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (IEquals(k, name)) return v;
  return "";
}

TestServer::TestServer(Mode mode) : mode_(mode), acceptor_(io_) {
  if (mode_ == Mode::kHttps) {
    const TestCa& ca = TestCa::Get();
    tls_ = std::make_unique<ssl::context>(ssl::context::tls_server);
    tls_->use_certificate_chain(asio::buffer(ca.cert_pem));
    tls_->use_private_key(asio::buffer(ca.key_pem), ssl::context::pem);
  }
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  acceptor_.open(ep.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(ep);
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  Accept();
  thread_ = std::thread([this] { io_.run(); });
}

TestServer::~TestServer() {
  io_.stop();
  thread_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
}

std::string TestServer::Url(const std::string& path, const std::string& host) const {
  return std::string(mode_ == Mode::kHttps ? "https" : "http") + "://" + host + ":" +
         std::to_string(port_) + path;
}

void TestServer::Handle(std::function<Reply(const SeenRequest&)> handler) {
  std::lock_guard lock(mu_);
  handler_ = std::move(handler);
}

std::vector<SeenRequest> TestServer::requests() {
  std::lock_guard lock(mu_);
  return requests_;
}

size_t TestServer::count() {
  std::lock_guard lock(mu_);
  return requests_.size();
}

void TestServer::Accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) return;
    std::lock_guard lock(mu_);
    workers_.emplace_back([this, s = std::move(socket)]() mutable { Serve(std::move(s)); });
    Accept();
  });
}

void TestServer::KeepAlive(int answers, bool then_drop) {
  std::lock_guard lock(mu_);
  answers_per_connection_ = answers;
  then_drop_ = then_drop;
}

size_t TestServer::connections() {
  std::lock_guard lock(mu_);
  return connections_;
}

void TestServer::Serve(tcp::socket socket) {
  std::function<Reply(const SeenRequest&)> handler;
  int answers = 1;
  bool then_drop = false;
  {
    std::lock_guard lock(mu_);
    handler = handler_;
    answers = answers_per_connection_;
    then_drop = then_drop_;
    ++connections_;
  }
  std::function<void(SeenRequest)> record = [this](SeenRequest r) {
    std::lock_guard lock(mu_);
    requests_.push_back(std::move(r));
  };
  if (mode_ == Mode::kHttp) {
    Exchange(socket, SeenRequest{}, handler, record, answers, then_drop);
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    return;
  }
  ssl::stream<tcp::socket> stream(std::move(socket), *tls_);
  boost::system::error_code ec;
  stream.handshake(ssl::stream_base::server, ec);
  if (ec) return;  // the client refused our certificate (or spoke plain HTTP)
  SeenRequest seen;
  if (const char* sni = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name))
    seen.sni = sni;
  Exchange(stream, std::move(seen), handler, record, answers, then_drop);
  if (then_drop) return;  // closed without a word, as a server dropping an idle connection
  stream.shutdown(ec);
}

StalledPort::StalledPort() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::listen(listen_fd_, 0);
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  // Never accepted: these fill the queue, later SYNs are dropped and a connect hangs.
  for (int i = 0; i < 8; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    fillers_.push_back(fd);
  }
  // Until the queue is full (a listener's TCP_INFO: tcpi_unacked is the accept queue's length,
  // tcpi_sacked its limit).
  WaitFor(
      [&] {
        tcp_info info{};
        socklen_t size = sizeof info;
        return ::getsockopt(listen_fd_, IPPROTO_TCP, TCP_INFO, &info, &size) == 0 &&
               info.tcpi_unacked > info.tcpi_sacked;
      },
      std::chrono::seconds(5));
}

StalledPort::~StalledPort() {
  for (int fd : fillers_) ::close(fd);
  ::close(listen_fd_);
}

}  // namespace a2ad::testing

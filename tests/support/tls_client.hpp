#pragma once
// A small blocking HTTPS/1.1 client for tests (issue 14): a real TLS handshake over loopback
// that trusts one CA (PEM text) and verifies the server's certificate for the name it
// connects to, optionally presenting a client certificate (mutual TLS). Keep-alive; a
// response is read to its end (a finite SSE stream too).
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http_client.hpp"

namespace a2ad::testing {

struct TlsClientOptions {
  std::string ca_pem;    // the CA the server's certificate must chain to
  std::string cert_pem;  // client certificate ("" = none)
  std::string key_pem;   // its key
  std::string host = "127.0.0.1";
  std::string verify_name = "localhost";  // the name the server's certificate must carry
};

class TlsHttpClient {
 public:
  TlsHttpClient(uint16_t port, TlsClientOptions options);
  ~TlsHttpClient();
  /// Connects and completes the TLS handshake (once; again after the server closed).
  /// Throws boost::system::system_error when the connection or the handshake fails.
  void Connect();
  /// One request on the kept-alive connection (connecting first if needed). Throws
  /// boost::system::system_error on transport errors (a refused client certificate shows
  /// here under TLS 1.3: the server's alert arrives after the client's handshake is done).
  ClientResponse Request(const std::string& method, const std::string& target,
                         const std::string& body = "",
                         std::vector<std::pair<std::string, std::string>> headers = {});
  /// POST a JSON-RPC request to /v1/a2a and return the parsed body (any status).
  ClientResponse Rpc(const std::string& method, const boost::json::value& params,
                     std::vector<std::pair<std::string, std::string>> headers = {});
  /// The TLS version the handshake agreed ("TLSv1.3"); "" before one.
  std::string protocol_version() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace a2ad::testing

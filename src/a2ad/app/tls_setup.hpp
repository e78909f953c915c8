#pragma once
// The server's TLS material from Config (issue 14): the certificate, key and client CA read and
// checked once at startup, the HTTPS context made of them, and the client certificate map.
// Internal to app/.
//
// Thread safety: call from the main thread; the result is read-only afterwards.
#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "a2ad/app/config.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/transport/auth/client_cert_auth.hpp"
#include "a2ad/transport/http/tls_context.hpp"

namespace a2ad::app {

struct ServingTls {
  transport::ServerTls pem;                              // what gRPC serves with
  std::shared_ptr<boost::asio::ssl::context> context;    // what HTTPS serves with
  std::unique_ptr<transport::ClientCertMap> client_map;  // mutual TLS; null without
};

/// nullptr when config.Tls() is false. kInvalidParams (the caller exits 2) for a file that
/// cannot be read or does not hold what it should, a key without a certificate (or the
/// reverse), --tls-client-ca or --tls-client-map without TLS or without each other. Logs what
/// it serves (never the PEM text).
core::Result<std::unique_ptr<ServingTls>> OpenServingTls(const Config& config);

}  // namespace a2ad::app

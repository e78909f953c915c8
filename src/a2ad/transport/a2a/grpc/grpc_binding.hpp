#pragma once
// The gRPC bindings of A2A on their own HTTP/2 listener, serving the operations of the A2A
// operation table (a2a_operations.hpp) as two services of one server (their packages differ):
// - A2A 1.0 (WIRE.md §10-12): lf.a2a.v1.A2AService of proto/lf/a2a/v1/a2a.proto; each RPC is
//   the operation of the same name.
// - A2A 0.3 (WIRE.md §9): a2a.v1.A2AService of proto/a2a/v1/a2a.proto (grpc_service_v03.cpp
//   maps its RPCs: TaskSubscription is SubscribeToTask, GetAgentCard the extended card);
//   requests and results in the 0.3 proto's shapes (protocol/v03/proto_json.hpp).
//
// A call's request message is turned into its ProtoJSON (the params of the operation), the
// operation's handler runs on the server's I/O executor, and its JSON result is parsed back
// into the response message (unknown members ignored). Server-streaming RPCs pump the
// operation's stream (sse_pump.hpp) as StreamResponse messages, one write at a time.
// Metadata: `a2a-version` must be absent or the service's version (1.x; 0.3), else
// UNIMPLEMENTED; `a2a-extensions` or `x-a2a-extensions` activates extensions as the HTTP
// headers do and the activated set is echoed in the initial metadata (`a2a-extensions`; for
// 0.3 `x-a2a-extensions`). Errors are gRPC statuses coded by the error table's gRPC column
// with a google.rpc.Status in grpc-status-details-bin holding the ErrorInfo (reason, domain
// "a2a-protocol.org", metadata); a 0.3 status message starts with the 0.3 SDKs' error class
// ("TaskNotFoundError: ..."). Plaintext (h2c), or TLS with the HTTP listener's certificate and
// key (Listen's `tls`); with its client CA, a client certificate is asked for and verified when
// sent, and its subject (gRPC's x509_subject, RFC 2253) authenticates a call that carries no
// credential (auth.hpp, client_cert_auth.hpp).
//
// Thread safety: Listen and Shutdown from one thread (the app's); calls are served on gRPC's
// threads, which only hand work to the I/O executor and finish calls from it.
#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/a2a/extensions.hpp"
#include "a2ad/transport/http/tls_context.hpp"

namespace a2ad::transport {

class GrpcBinding {
 public:
  /// `operations` and `extensions` (may be null) must outlive the binding. With `serve_v03`
  /// false (`--a2a-versions 1.0`) the 0.3 service answers every call VersionNotSupported.
  /// `auth` (may be null: no authentication) authenticates every call (auth.hpp).
  GrpcBinding(const OperationTable& operations, const boost::asio::any_io_executor& io,
              const ExtensionRegistry* extensions, bool serve_v03 = true,
              Authenticator* auth = nullptr);
  /// Shutdown().
  ~GrpcBinding();
  GrpcBinding(const GrpcBinding&) = delete;
  GrpcBinding& operator=(const GrpcBinding&) = delete;

  /// Starts serving on host:port (port 0: a free one), over TLS with `tls` (null: plaintext);
  /// returns the bound port. kInvalidParams when it cannot listen there.
  core::Result<uint16_t> Listen(const std::string& host, uint16_t port,
                                const ServerTls* tls = nullptr);
  /// Stops taking calls; calls in flight are cancelled (streams end). Idempotent.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace a2ad::transport

#pragma once
// The gRPC binding of A2A 1.0 (WIRE.md §10-12; service lf.a2a.v1.A2AService of
// proto/lf/a2a/v1/a2a.proto): its own HTTP/2 listener, serving the operations of the A2A
// operation table (a2a_operations.hpp) under their 1.0 names, which are the RPC names.
//
// A call's request message is turned into its ProtoJSON (the JSON the other bindings take as
// params), the operation's handler runs on the server's I/O executor, and its JSON result is
// parsed back into the response message (unknown members ignored). Server-streaming RPCs
// (SendStreamingMessage, SubscribeToTask) pump the operation's stream (sse_pump.hpp) as
// StreamResponse messages, one write at a time. Metadata: `a2a-version` must be absent or
// 1.x (else UNIMPLEMENTED); `a2a-extensions` activates extensions as the HTTP header does and
// the activated set is echoed in the initial metadata. Errors are gRPC statuses named by the
// error table with a google.rpc.Status in grpc-status-details-bin holding the ErrorInfo
// (reason, domain "a2a-protocol.org", metadata). Plaintext (h2c); TLS is the auth issue's.
//
// Thread safety: Listen and Shutdown from one thread (the app's); calls are served on gRPC's
// threads, which only hand work to the I/O executor and finish calls from it.
#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/transport/a2a_operations.hpp"
#include "a2ad/transport/extensions.hpp"

namespace a2ad::transport {

class GrpcBinding {
 public:
  /// `operations` and `extensions` (may be null) must outlive the binding.
  GrpcBinding(const OperationTable& operations, boost::asio::any_io_executor io,
              const ExtensionRegistry* extensions);
  /// Shutdown().
  ~GrpcBinding();
  GrpcBinding(const GrpcBinding&) = delete;
  GrpcBinding& operator=(const GrpcBinding&) = delete;

  /// Starts serving on host:port (port 0: a free one); returns the bound port. kInvalidParams
  /// when it cannot listen there.
  core::Result<uint16_t> Listen(const std::string& host, uint16_t port);
  /// Stops taking calls; calls in flight are cancelled (streams end). Idempotent.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace a2ad::transport

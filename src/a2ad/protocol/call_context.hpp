#pragma once
// Who is calling, for whom, and how: built once per request by the transport that received
// it (JSON-RPC, REST, gRPC, the OpenWOP REST surface) and passed to every service call.
// Services decide visibility and record authorship from it; they never read a tenant or an
// identity from the request body (OpenWOP RFC 0152 §E: the tenant comes from the credential).
//
// The principal is the API key's (transport/auth/auth.hpp: id = key id, its tenant and scopes); a
// server without any key (development mode) gives every request the anonymous principal of
// the default tenant with every scope. Work the server starts on its own (recovery, timers,
// child runs) uses System(), or the context recorded with the run.
//
// Pure value; copy freely. Thread safety: none needed (immutable once built).
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/protocol/jsonrpc.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol {

/// The binding a request arrived on.
enum class Binding { kInternal, kJsonRpc, kRest, kGrpc, kOpenwop };

struct Principal {
  /// Stable identifier of the caller: recorded as a task's owner and as `decidedBy` /
  /// `resolvedBy` on the answers it gives. "anonymous" without authentication.
  std::string id = kAnonymousPrincipal;
  /// The tenant the credential belongs to; every object the call creates or reads is that
  /// tenant's. "default" without authentication.
  std::string tenant = kDefaultTenant;
  /// Scopes the credential grants ("tasks:read", "runs:write", "admin", ...); `all_scopes`
  /// stands for every scope (unauthenticated development mode, the system).
  std::vector<std::string> scopes;
  bool all_scopes = true;
  bool authenticated = false;
};

struct CallContext {
  Principal principal;
  Binding binding = Binding::kInternal;
  WireVersion version = WireVersion::kV10;
  /// Extension URIs the caller asked for (A2A-Extensions / X-A2A-Extensions, or the gRPC
  /// metadata), as sent; and those of them this server supports, which are active for this
  /// call and echoed in the response.
  std::vector<std::string> requested_extensions;
  std::vector<std::string> activated_extensions;
  /// When the caller stops waiting (a transport timeout, a gRPC deadline); nullopt = none.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// The W3C traceparent of the span this call is part of (core/trace.hpp): the request's
  /// span, or the run's for work the server does for a run; "" for none. A run started by
  /// the call keeps it (metadata.openwop.traceparent).
  std::string traceparent;

  const std::string& tenant() const { return principal.tenant; }
  const std::string& caller() const { return principal.id; }
  bool HasScope(std::string_view scope) const {
    return principal.all_scopes ||
           std::find(principal.scopes.begin(), principal.scopes.end(), scope) !=
               principal.scopes.end();
  }
  bool Activated(std::string_view uri) const {
    return std::find(activated_extensions.begin(), activated_extensions.end(), uri) !=
           activated_extensions.end();
  }

  /// The anonymous caller of an unauthenticated server, on `binding`.
  static CallContext Anonymous(Binding binding, WireVersion version) {
    CallContext c;
    c.binding = binding;
    c.version = version;
    return c;
  }
  /// The server acting on its own (recovery, timers, child runs of a run whose caller is not
  /// known): default tenant, every scope.
  static CallContext System() {
    CallContext c;
    c.principal.id = "system";
    return c;
  }
};

}  // namespace a2ad::protocol

#pragma once
// How an outbound call failed, for callers that act on the kind (retry, report, map to their
// wire). Every error of UrlGuard and HttpClient carries the detail {"egress", <name>}; the
// message says what happened in words. Header-only; pure functions.
#include <optional>
#include <string>
#include <string_view>

#include "a2ad/core/error.hpp"

namespace a2ad::net {

enum class EgressFailure {
  kRefused,     // the guard refused the URL (scheme, syntax, internal name, address)
  kUnresolved,  // the host name has no address right now (no such host, DNS failure)
  kRedirect,    // a redirect the policy does not allow (https -> http, too many)
  kConnect,     // no vetted endpoint accepted the connection
  kTls,         // handshake or certificate verification failed
  kTimeout,     // the connect or total timeout passed
  kIo,          // the exchange broke off (write, read, malformed answer)
  kTooLarge,    // the answer's body is past the request's limit
};

inline constexpr std::string_view kEgressDetail = "egress";

inline std::string_view EgressFailureName(EgressFailure f) {
  switch (f) {
    case EgressFailure::kRefused:
      return "refused";
    case EgressFailure::kUnresolved:
      return "unresolved";
    case EgressFailure::kRedirect:
      return "redirect";
    case EgressFailure::kConnect:
      return "connect";
    case EgressFailure::kTls:
      return "tls";
    case EgressFailure::kTimeout:
      return "timeout";
    case EgressFailure::kIo:
      return "io";
    case EgressFailure::kTooLarge:
      return "too_large";
  }
  return "io";
}

/// Guard and redirect refusals are kInvalidParams (the caller named a bad destination);
/// network failures kUnavailable.
inline core::Error EgressError(EgressFailure f, std::string message) {
  const bool caller_fault = f == EgressFailure::kRefused || f == EgressFailure::kUnresolved ||
                            f == EgressFailure::kRedirect;
  return core::Error(caller_fault ? core::ErrorCode::kInvalidParams : core::ErrorCode::kUnavailable,
                     std::move(message),
                     {{std::string(kEgressDetail), std::string(EgressFailureName(f))}});
}

/// The kind of an error made by EgressError; nullopt for any other error.
inline std::optional<EgressFailure> EgressFailureOf(const core::Error& e) {
  for (const auto& [k, v] : e.details) {
    if (k != kEgressDetail) continue;
    for (auto f : {EgressFailure::kRefused, EgressFailure::kUnresolved, EgressFailure::kRedirect,
                   EgressFailure::kConnect, EgressFailure::kTls, EgressFailure::kTimeout,
                   EgressFailure::kIo, EgressFailure::kTooLarge})
      if (v == EgressFailureName(f)) return f;
  }
  return std::nullopt;
}

}  // namespace a2ad::net

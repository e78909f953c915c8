#pragma once
// The one mapping of errors to each surface (STYLE.md #3; WIRE.md §6, §12.1; DIGEST §2.3):
// core::ErrorCode -> JSON-RPC code, HTTP status, gRPC status, and the OpenWOP REST code; and
// the OpenWOP REST codes -> HTTP status. Domain code names an OpenWOP code, where the generic
// one of its ErrorCode is not precise enough, with the `reason` detail of its core::Error
// ({"reason", "interrupt_already_resolved"}). transport/error_body.hpp writes the bodies.
//
// Thread safety: pure functions over constant tables.
#include <optional>
#include <string_view>

#include "a2ad/core/error.hpp"

namespace a2ad::protocol {

struct ErrorMapping {
  int jsonrpc_code;                  // JSON-RPC error.code
  int http_status;                   // REST / transport status
  std::string_view grpc_status;      // canonical gRPC code name
  std::string_view default_message;  // the SDKs' default text
  std::string_view rest_code;        // OpenWOP error code (DIGEST §2.3) when no reason names one
};

/// Total over ErrorCode.
const ErrorMapping& MapError(core::ErrorCode code);

/// The A2A 0.3 SDKs' error class of `code` ("TaskNotFoundError"), by its JSON-RPC code: the
/// prefix of an A2A 0.3 gRPC status message (WIRE.md §9). Codes 0.3 lacks (-32008 to -32010)
/// take their 1.0 class.
std::string_view V03ErrorName(core::ErrorCode code);

/// The HTTP status of an OpenWOP error code ("interrupt_already_resolved" -> 409); nullopt
/// for a code the table does not know.
std::optional<int> RestStatusOf(std::string_view rest_code);

struct RestError {
  std::string_view code;  // the envelope's "error"
  int http_status;
};

/// How `e` is answered on the REST surface: its `reason` detail when the table knows that
/// code, else the mapping of its ErrorCode. The returned view points into `e` or the table.
RestError MapRestError(const core::Error& e);

}  // namespace a2ad::protocol

#pragma once
// The one mapping of core::ErrorCode to each binding's error (STYLE.md #3; WIRE.md §6, §12.1).
#include <string_view>

#include "a2ad/core/error.hpp"

namespace a2ad::protocol {

struct ErrorMapping {
  int jsonrpc_code;                  // JSON-RPC error.code
  int http_status;                   // REST / transport status
  std::string_view grpc_status;      // canonical gRPC code name
  std::string_view default_message;  // the SDKs' default text
};

/// Total over ErrorCode.
const ErrorMapping& MapError(core::ErrorCode code);

}  // namespace a2ad::protocol

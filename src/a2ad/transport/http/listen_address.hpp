#pragma once
// Where a listener binds, as the --listen options spell it.
//
// Thread safety: pure.
#include <cstdint>
#include <string>

#include "a2ad/core/result.hpp"

namespace a2ad::transport {

struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};

/// "127.0.0.1:8080", "[::1]:0", "localhost:9000". kInvalidParams naming the problem.
core::Result<ListenAddress> ParseListen(const std::string& text);

}  // namespace a2ad::transport

#include "a2ad/transport/http/listen_address.hpp"

namespace a2ad::transport {

core::Result<ListenAddress> ParseListen(const std::string& text) {
  ListenAddress out;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return core::Error(core::ErrorCode::kInvalidParams,
                         "--listen '" + text + "': expected [v6-address]:port");
    out.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos)
      return core::Error(core::ErrorCode::kInvalidParams,
                         "--listen '" + text + "': expected host:port");
    out.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (out.host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    return core::Error(core::ErrorCode::kInvalidParams,
                       "--listen '" + text + "': expected host:port with a port 0-65535");
  out.port = static_cast<uint16_t>(std::stoul(port));
  return out;
}

}  // namespace a2ad::transport

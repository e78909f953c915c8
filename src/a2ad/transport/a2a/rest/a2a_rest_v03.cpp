// What the A2A 0.3 REST binding writes differently from 1.0's (a2a_rest.hpp): its error body
// and its stream frames. The routes, params and dispatch are a2a_rest.cpp's, shared.
#include <string>

#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/transport/a2a/rest/a2a_rest.hpp"
#include "a2ad/transport/error_body.hpp"

namespace a2ad::transport {
using core::Error;

std::string A2aRest03ErrorText(const Error& e) {
  // The error member of the 0.3 JSON-RPC answer: {code, message, data?: {details}}, the body
  // the 0.3 SDKs' REST servers send and their clients map back to A2A errors by code.
  boost::json::object rpc =
      protocol::MakeJsonRpcError(nullptr, ClientFacing(e), protocol::WireVersion::kV03);
  return protocol::SerializeJson(rpc["error"]);
}

HttpResponse A2aRest03ErrorResponse(const Error& e) {
  // ClientFacing keeps the code (and logs an internal error once, in A2aRest03ErrorText).
  return JsonResponse(protocol::MapError(e.code).http_status, A2aRest03ErrorText(e));
}

SsePumpSpec A2aRest03StreamSpec(bool close_on_interrupt, std::chrono::milliseconds heartbeat) {
  auto closes = [close_on_interrupt](const tasks::StreamItem& item) {
    return EndsA2aStream(item, close_on_interrupt);
  };
  SsePumpSpec spec;
  spec.heartbeat = heartbeat;
  spec.closes = closes;
  spec.frame = [closes](const tasks::StreamItem& item) {
    std::string out;
    if (!item.a2a) return out;
    const std::string& result =
        item.Json(protocol::Wire::kV03Proto, StreamFinal(item, closes(item)));
    out.reserve(result.size() + 32);
    out.append("id: ").append(std::to_string(item.sequence));
    out.append("\ndata: ").append(result).append("\n\n");
    return out;
  };
  spec.cut_short = [](const Error& why) {
    return "event: error\ndata: " + A2aRest03ErrorText(why) + "\n\n";
  };
  return spec;
}

}  // namespace a2ad::transport

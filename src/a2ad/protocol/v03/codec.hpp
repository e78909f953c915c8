#pragma once
// A2A v0.3 JSON-RPC JSON (types.ts shapes, WIRE.md §4-§7) -> the internal model (encoding is
// protocol/encode.hpp's Wire::kV03). `historyLength: 0` means unlimited (decoded as nullopt);
// `blocking` defaults to true. Decoders report the first offending field by its JSON path
// (kInvalidParams with a `field` detail, json_util.hpp).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol::v03 {

core::Result<Part> PartFromJson(const boost::json::value& v, std::string_view path);
core::Result<Message> MessageFromJson(const boost::json::value& v, std::string_view path);

/// MessageSendParams.
core::Result<SendMessageRequest> SendMessageRequestFromJson(const boost::json::value& params);
/// TaskQueryParams.
core::Result<GetTaskRequest> GetTaskRequestFromJson(const boost::json::value& params);
/// TaskIdParams.
core::Result<CancelTaskRequest> CancelTaskRequestFromJson(const boost::json::value& params);

}  // namespace a2ad::protocol::v03

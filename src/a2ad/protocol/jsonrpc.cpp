#include "a2ad/protocol/jsonrpc.hpp"

#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

core::Result<JsonRpcRequest> ParseJsonRpcRequest(std::string_view body, json::value& id_out) {
  id_out = nullptr;
  // A value fault (a number out of range, a name given twice) is answered as invalid params
  // once the envelope, and so the id to answer, has been read.
  std::optional<Error> fault;
  auto parsed = ParseJsonReportingFaults(body, fault);
  if (!parsed) return std::move(parsed).error();
  json::value doc = std::move(parsed).value();
  if (doc.is_array())
    return Error(ErrorCode::kInvalidRequest,
                 "JSON-RPC batch requests are not supported; send one request per HTTP request");
  if (!doc.is_object())
    return Error(ErrorCode::kInvalidRequest, "a JSON-RPC request must be a JSON object");
  json::object& o = doc.get_object();
  if (auto* id = o.if_contains("id")) {
    if (id->is_string() || id->is_int64() || id->is_uint64() || id->is_null()) {
      id_out = *id;
    } else {
      return Error(ErrorCode::kInvalidRequest, "\"id\" must be a string, an integer or null");
    }
  }
  auto* ver = o.if_contains("jsonrpc");
  if (!ver || !ver->is_string() || ver->get_string() != "2.0")
    return Error(ErrorCode::kInvalidRequest, "\"jsonrpc\" must be exactly \"2.0\"");
  auto* method = o.if_contains("method");
  if (!method || !method->is_string() || method->get_string().empty())
    return Error(ErrorCode::kInvalidRequest, "\"method\" must be a non-empty string");
  const bool notification = !o.contains("id");
  if (fault) {
    const std::string& field = fault->details.empty() ? std::string() : fault->details[0].second;
    if (!field.starts_with("params")) {
      fault->code = ErrorCode::kInvalidRequest;  // in the envelope itself
      fault->details.clear();
    }
    return std::move(*fault);
  }
  JsonRpcRequest r;
  r.id = id_out;
  r.method = method->get_string();
  r.notification = notification;
  if (auto* p = o.if_contains("params")) {
    if (!p->is_object() && !p->is_array() && !p->is_null())
      return Error(ErrorCode::kInvalidRequest, "\"params\" must be an object");
    r.params = std::move(*p);
  }
  return r;
}

json::object MakeJsonRpcResult(const json::value& id, json::value result) {
  json::object o;
  o["jsonrpc"] = "2.0";
  o["id"] = id;
  o["result"] = std::move(result);
  return o;
}

json::array ErrorDetailsJson(const Error& error, std::string_view message) {
  json::array data;
  json::object info;
  info["@type"] = "type.googleapis.com/google.rpc.ErrorInfo";
  info["reason"] = core::ErrorCodeName(error.code);
  info["domain"] = "a2a-protocol.org";
  json::object md;
  std::string field;
  for (const auto& [k, v] : error.details) {
    md[k] = v;
    if (k == "field") field = v;
  }
  info["metadata"] = std::move(md);
  data.emplace_back(std::move(info));
  if (!field.empty()) {
    json::object violation{{"field", field}, {"description", message}};
    json::object bad;
    bad["@type"] = "type.googleapis.com/google.rpc.BadRequest";
    bad["fieldViolations"] = json::array{std::move(violation)};
    data.emplace_back(std::move(bad));
  }
  return data;
}

json::object MakeJsonRpcError(const json::value& id, const Error& error, WireVersion version) {
  const ErrorMapping& m = MapError(error.code);
  json::object err;
  err["code"] = m.jsonrpc_code;
  err["message"] = error.message.empty() ? std::string(m.default_message) : error.message;
  if (version == WireVersion::kV10) {
    err["data"] = ErrorDetailsJson(error, err["message"].as_string());
  } else if (!error.details.empty()) {
    json::object data;
    for (const auto& [k, v] : error.details) data[k] = v;
    err["data"] = std::move(data);
  }
  json::object o;
  o["jsonrpc"] = "2.0";
  o["id"] = id;
  o["error"] = std::move(err);
  return o;
}

WireVersion MethodVersion(std::string_view method) {
  return method.find('/') != std::string_view::npos ? WireVersion::kV03 : WireVersion::kV10;
}

}  // namespace a2ad::protocol

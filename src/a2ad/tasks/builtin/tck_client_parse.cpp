#include "a2ad/tasks/builtin/tck_client_parse.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::tasks {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

Error Bad(std::string message) { return Error(ErrorCode::kInvalidParams, std::move(message)); }

// "SendMessage", "send_message", "message/send" -> "sendmessage" / "messagesend".
std::string Folded(std::string_view op) {
  std::string out;
  for (char c : op)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

core::Result<json::object> ReadTask(const json::value& v, std::string_view path) {
  auto task = protocol::v10::TaskFromJson(v, path);
  if (!task) return std::move(task).error();
  return protocol::TaskToJson(*task);
}

core::Result<json::object> ReadSendResult(const json::value& v) {
  if (!v.is_object()) return Bad("wire_payload: expected an object (a task or a message)");
  const json::object& o = v.get_object();
  if (const json::value* m = o.if_contains("message")) {
    auto message = protocol::v10::MessageFromJson(*m, "wire_payload.message");
    if (!message) return std::move(message).error();
    return json::object{{"message", protocol::MessageToJson(*message)}};
  }
  const json::value& task = o.contains("task") ? o.at("task") : v;  // (a bare task too)
  auto read = ReadTask(task, "wire_payload.task");
  if (!read) return std::move(read).error();
  return json::object{{"task", std::move(*read)}};
}

core::Result<json::object> ReadList(const json::value& v) {
  if (!v.is_object() || !v.get_object().contains("tasks") || !v.at("tasks").is_array())
    return Bad("wire_payload: a ListTasks response has a tasks array");
  json::object out = v.get_object();  // nextPageToken, pageSize, totalSize as they came
  json::array tasks;
  const json::array& in = v.at("tasks").get_array();
  for (size_t i = 0; i < in.size(); ++i) {
    auto read = ReadTask(in[i], "wire_payload.tasks[" + std::to_string(i) + "]");
    if (!read) return std::move(read).error();
    tasks.push_back(std::move(*read));
  }
  out["tasks"] = std::move(tasks);
  return out;
}

}  // namespace

core::Result<json::object> TckClientParse(const protocol::Message& message) {
  const json::object* request = nullptr;
  for (const auto& p : message.parts)
    if (p.kind == protocol::Part::Kind::kData && p.data.is_object() &&
        p.data.get_object().contains("operation") && p.data.get_object().contains("wire_payload")) {
      request = &p.data.get_object();
      break;
    }
  if (!request) return Bad("tck-client-parse needs a data part {operation, wire_payload}");
  if (!request->at("operation").is_string())
    return Bad("tck-client-parse: operation must be a string");
  const std::string op = Folded(request->at("operation").get_string());
  json::value payload = request->at("wire_payload");
  // A golden response {status, headers, body}: its body.
  if (payload.is_object() && payload.get_object().contains("body") &&
      !payload.get_object().contains("jsonrpc"))
    payload = json::value(payload.at("body"));
  // A JSON-RPC envelope: its error as it came, else its result.
  if (payload.is_object() && payload.get_object().contains("jsonrpc")) {
    const json::object& envelope = payload.get_object();
    if (const json::value* e = envelope.if_contains("error")) {
      if (!e->is_object() || !e->get_object().contains("code") ||
          !e->at("code").is_int64() || !e->get_object().contains("message"))
        return Bad("wire_payload.error: a JSON-RPC error has an integer code and a message");
      return json::object{{"error", *e}};
    }
    if (!envelope.contains("result"))
      return Bad("wire_payload: a JSON-RPC response has a result or an error");
    payload = json::value(envelope.at("result"));
  }
  if (op == "sendmessage" || op == "messagesend") return ReadSendResult(payload);
  if (op == "gettask" || op == "tasksget" || op == "canceltask" || op == "taskscancel")
    return ReadTask(payload, "wire_payload");
  if (op == "listtasks" || op == "taskslist") return ReadList(payload);
  return Bad("tck-client-parse reads SendMessage, GetTask, CancelTask and ListTasks responses, "
             "not " + std::string(request->at("operation").get_string()));
}

}  // namespace a2ad::tasks

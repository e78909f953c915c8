#include "a2ad/transport/error_body.hpp"

#include <boost/json/object.hpp>
#include <cstdio>
#include <random>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::transport {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

// Not a secret: it only links a client's report to the server's log line.
std::string NewErrorId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

std::string Detail(const Error& e, std::string_view key) {
  for (const auto& [k, v] : e.details)
    if (k == key) return v;
  return {};
}

}  // namespace

Error ClientFacing(Error e) {
  // A database's own words (its error text, names of its constraints) stay in the log.
  if (!Detail(e, "database").empty() && e.code != ErrorCode::kInternal &&
      e.code != ErrorCode::kDataCorrupt) {
    const std::string id = NewErrorId();
    core::LogWarn("error id " + id + ": " + e.message);
    std::string message;
    switch (e.code) {
      case ErrorCode::kUnavailable:
        message = "the database is unavailable right now; retry later";
        break;
      case ErrorCode::kConflict:
        message = "the task changed meanwhile; read it and retry";
        break;
      case ErrorCode::kInvalidParams:
        message = "the request holds a value the database cannot store (a NUL character, text "
                  "that is not UTF-8, or a value too long)";
        break;
      default:
        message = "the database refused the request";
    }
    std::vector<core::ErrorDetail> details{{"errorId", id}};
    if (auto task = Detail(e, "taskId"); !task.empty()) details.emplace_back("taskId", task);
    return Error(e.code, message + "; error id " + id, std::move(details));
  }
  if (e.code != ErrorCode::kInternal && e.code != ErrorCode::kDataCorrupt) return e;
  const std::string id = NewErrorId();
  std::string logged = "error id " + id + ": " + e.message;
  for (const auto& [k, v] : e.details) logged += " " + k + "=" + v;
  core::LogError(logged);
  if (e.code == ErrorCode::kDataCorrupt) {
    const std::string task = Detail(e, "taskId");
    std::string message = (task.empty() ? std::string("a stored record") : "task " + task) +
                          " cannot be read: its stored record is damaged and has been set aside "
                          "(an operator can inspect and repair it with `a2ad doctor`); error id " +
                          id;
    std::vector<core::ErrorDetail> details{{"errorId", id}};
    if (!task.empty()) details.emplace_back("taskId", task);
    return Error(ErrorCode::kDataCorrupt, std::move(message), std::move(details));
  }
  return Error(ErrorCode::kInternal,
               "internal error; the server log has the details under error id " + id,
               {{"errorId", id}});
}

std::string JsonRpcErrorText(const json::value& id, const Error& e, protocol::WireVersion version) {
  return protocol::SerializeJson(protocol::MakeJsonRpcError(id, ClientFacing(e), version));
}

HttpResponse JsonRpcErrorResponse(const json::value& id, const Error& e,
                                  protocol::WireVersion version) {
  return JsonResponse(200, JsonRpcErrorText(id, e, version));
}

HttpResponse RestErrorResponse(const Error& error) {
  const Error e = ClientFacing(error);
  const protocol::RestError rest = protocol::MapRestError(e);
  json::object details;
  for (const auto& [k, v] : e.details)
    if (k != "reason") details[k] = v;
  json::object body{{"error", rest.code}, {"message", e.message}};
  if (!details.empty()) body["details"] = std::move(details);
  return JsonResponse(rest.http_status, protocol::SerializeJson(body));
}

HttpResponse RestErrorResponse(int status, std::string_view code, std::string message,
                               const std::vector<core::ErrorDetail>& details) {
  json::object body{{"error", code}, {"message", std::move(message)}};
  if (!details.empty()) {
    json::object d;
    for (const auto& [k, v] : details) d[k] = v;
    body["details"] = std::move(d);
  }
  return JsonResponse(status, protocol::SerializeJson(body));
}

HttpResponse MethodNotAllowed(std::string_view allow, std::string message) {
  if (message.empty()) message = "use " + std::string(allow);
  HttpResponse r = RestErrorResponse(405, "method_not_allowed", std::move(message));
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

}  // namespace a2ad::transport

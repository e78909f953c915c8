#pragma once
// The one JSON-RPC endpoint serving A2A v0.3 and v1.0 (WIRE.md §1.3, §5, §11, §19.2):
// decode -> TaskService -> encode. The wire version comes from the method name; the
// `A2A-Version` header must agree (absent = 0.3), else VersionNotSupported (-32009).
// Every error is a JSON-RPC error with HTTP 200.
#include <boost/asio/awaitable.hpp>

#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/http_types.hpp"

namespace a2ad::transport {

class JsonRpcHandler {
 public:
  explicit JsonRpcHandler(tasks::TaskService& service) : service_(service) {}
  boost::asio::awaitable<HttpResponse> Handle(HttpRequest request);

 private:
  tasks::TaskService& service_;
};

}  // namespace a2ad::transport

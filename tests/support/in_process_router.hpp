#pragma once
// An in-process a2ad for transport tests: a memory store, a TaskService with the echo skill
// (on a sequential id generator and a manual clock) and, once a test builds it, a Router.
// Call runs one request to its answer on the calling thread (the io_context is run until it
// has nothing left); a streaming answer's `stream` is left for the test to drive.
// Header-only: the tests that use it link transport themselves.
//
// Thread safety: one test thread.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/router.hpp"

namespace a2ad::testing {

struct InProcessRouter {
  core::ManualClock clock;
  std::unique_ptr<core::IdGenerator> ids = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store;
  boost::asio::io_context io;
  tasks::TaskService service{store, clock, *ids, io.get_executor(), {}};
  std::unique_ptr<transport::Router> router;  // built by the test

  InProcessRouter() {
    service.RegisterSkill({"echo", "Echo", "echoes", {}, {}},
                          std::make_shared<tasks::EchoExecutor>());
  }

  transport::HttpResponse Call(transport::HttpRequest r) {
    transport::HttpResponse out;
    boost::asio::co_spawn(io, router->Handle(std::move(r)),
                          [&](std::exception_ptr ep, transport::HttpResponse resp) {
                            if (ep) std::rethrow_exception(ep);
                            out = std::move(resp);
                          });
    io.restart();
    io.run();
    return out;
  }

  /// GET `target` with `headers`.
  transport::HttpResponse Get(const std::string& target,
                              std::vector<std::pair<std::string, std::string>> headers = {}) {
    transport::HttpRequest r;
    r.method = "GET";
    r.target = target;
    r.headers = std::move(headers);
    return Call(std::move(r));
  }

  /// POST `body` to the JSON-RPC endpoint with `headers`.
  transport::HttpResponse Rpc(std::string body,
                              std::vector<std::pair<std::string, std::string>> headers = {}) {
    transport::HttpRequest r;
    r.method = "POST";
    r.target = "/v1/a2a";
    r.headers = std::move(headers);
    r.body = std::move(body);
    return Call(std::move(r));
  }
};

}  // namespace a2ad::testing

#pragma once
// A gRPC binding (transport/a2a/grpc/grpc_binding.hpp: lf.a2a.v1 and a2a.v1 on one HTTP/2 port)
// over a fresh task service, for tests that call it with the generated stubs over real HTTP/2
// on 127.0.0.1 (port 0): in-memory store, a manual clock that stands still, sequential ids,
// push configs served by a PushService whose egress guard resolves only example.com (nothing
// is ever sent), the echo, gate and tck skills, and the fixture servers' options
// (conformance.hpp ServerOptions). Also: the google.rpc.Status a status carries.
// Header-only: the tests that use it link transport_grpc.
//
// Thread safety: built and destroyed on the test thread; the binding's handlers run on one
// I/O thread of the server's own.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <thread>

#include "a2ad/core/api_key.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/builtin/tck_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/a2a/extensions.hpp"
#include "a2ad/transport/a2a/grpc/grpc_binding.hpp"
#include "conformance.hpp"
#include "google/rpc/status.pb.h"

namespace a2ad::testing {

class GrpcTestServer {
 public:
  explicit GrpcTestServer(ServerOptions options = {}) {
    tasks::TaskServiceOptions o;
    o.vet_push_config = [this](protocol::PushNotificationConfig& c, const std::string& task_id) {
      return push.Vet(c, task_id);
    };
    o.on_commit = [this](const storage::TaskRecord* previous, storage::TaskCommit& commit) {
      push.OnCommit(previous, commit);
    };
    service =
        std::make_unique<tasks::TaskService>(store, clock, *ids, io_.get_executor(), std::move(o));
    service->RegisterSkill({"echo", "Echo", "echoes", {}, {}},
                           std::make_shared<tasks::EchoExecutor>());
    service->RegisterSkill({"gate", "Gate", "asks one question", {}, {}},
                           std::make_shared<GateExecutor>());
    service->RegisterSkill({"tck", "TCK", "the conformance kit's agent", {}, {}},
                           std::make_shared<tasks::TckExecutor>());
    transport::Extension geo;
    geo.uri = kGeoExtension;
    extensions_.Register(std::move(geo));
    if (options.require_extension) {
      transport::Extension required;
      required.uri = kRequiredExtension;
      required.required = true;
      extensions_.Register(std::move(required));
    }
    ops_ = std::make_unique<transport::OperationTable>(transport::CoreA2aOperations(*service, 64));
    if (options.serve_push) transport::AddPushOperations(*ops_, push, *service);
    if (options.authenticated) {
      storage::ApiKeyRecord key;
      key.key_id = kGoldenReaderKeyId;
      key.secret_sha256 = core::HashApiKeySecret(kGoldenReaderSecret);
      key.tenant = "default";
      key.scopes = {"tasks:read"};
      EXPECT_TRUE(keys_.Insert(key));
      auth_ = std::make_unique<transport::Authenticator>(keys_, clock);
    }
    EXPECT_TRUE(push.WarmCache());
    if (options.stopping) service->StopAccepting();
    binding_ = std::make_unique<transport::GrpcBinding>(*ops_, io_.get_executor(), &extensions_,
                                                        options.serve_v03, auth_.get());
    auto port = binding_->Listen("127.0.0.1", 0);
    EXPECT_TRUE(port) << port.error().message;
    io_thread_ = std::thread([this] { io_.run(); });
    channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port ? port.value() : 0),
                                  grpc::InsecureChannelCredentials());
  }
  ~GrpcTestServer() {
    binding_->Shutdown();
    work_.reset();
    io_.stop();
    io_thread_.join();
  }
  GrpcTestServer(const GrpcTestServer&) = delete;
  GrpcTestServer& operator=(const GrpcTestServer&) = delete;

  core::ManualClock clock{1767261600000};  // 2026-01-01T10:00:00.000Z, standing still
  std::unique_ptr<core::IdGenerator> ids = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store;
  net::StaticResolver resolver{{{"example.com", {"93.184.216.34"}}}};
  net::UrlGuard guard = net::UrlGuard::Create({}, resolver).value();
  push::PushService push{store, store, guard, clock, *ids};

 private:
  boost::asio::io_context io_;  // before the service, which posts to it
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);

 public:
  std::unique_ptr<tasks::TaskService> service;
  std::shared_ptr<grpc::Channel> channel;  // to both services

 private:
  transport::ExtensionRegistry extensions_;
  storage::MemoryApiKeyStore keys_;
  std::unique_ptr<transport::Authenticator> auth_;  // options.authenticated
  std::unique_ptr<transport::OperationTable> ops_;
  std::unique_ptr<transport::GrpcBinding> binding_;
  std::thread io_thread_;
};

/// The google.rpc.Status in `st`'s grpc-status-details-bin, checked against the status itself
/// (same code and message, exactly one detail: a google.rpc.ErrorInfo of domain
/// "a2a-protocol.org"); its ErrorInfo.
inline google::rpc::ErrorInfo ErrorInfoOf(const grpc::Status& st) {
  google::rpc::Status details;
  google::rpc::ErrorInfo info;
  EXPECT_TRUE(details.ParseFromString(st.error_details())) << "no google.rpc.Status details";
  EXPECT_EQ(details.code(), static_cast<int>(st.error_code()));
  EXPECT_EQ(details.message(), st.error_message());
  EXPECT_EQ(details.details_size(), 1);
  if (details.details_size() == 1) {
    EXPECT_TRUE(details.details(0).UnpackTo(&info));
  }
  EXPECT_EQ(info.domain(), "a2a-protocol.org");
  return info;
}

}  // namespace a2ad::testing

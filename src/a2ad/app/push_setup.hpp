#pragma once
// Composition of push notifications (issue 5): the concrete push store, signing keys,
// PushService and DeliveryWorker, wired from Config and the shared egress guard and client
// (egress_setup.hpp). Kept out of server.cpp so the composition root stays readable.
//
// Ownership: OpenPush's `tasks`, `clock`, `ids` and `egress`, and Start's `clock` and `ids`,
// are held by reference: they must outlive the setup.
//
// Thread safety: not thread-safe: one owner, the composition root on its thread, in order:
// OpenPush; Connect (before TaskService is built from the options); Start, before the first
// commit (task_store's wake hook reads `worker` on the store's thread); Stop at shutdown
// (stops the worker). The parts are thread-safe as their headers say.
#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "a2ad/app/config.hpp"
#include "a2ad/app/egress_setup.hpp"
#include "a2ad/push/delivery_worker.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/push/waking_task_store.hpp"
#include "a2ad/storage/push_store.hpp"
#include "a2ad/storage/server_keys.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::app {

struct PushSetup {
  storage::PushStore* store = nullptr;  // the backend's (closed with it)
  std::unique_ptr<push::KeyStore> keys;
  const net::HttpClient* client = nullptr;          // push configs' (egress.push_client)
  const net::HttpClient* webhook_client = nullptr;  // webhooks' (egress.webhook_client)
  std::unique_ptr<push::PushService> service;
  std::shared_ptr<push::DeliveryWorker> worker;
  /// The task store TaskService must use: wakes the worker when outbox rows are durable.
  std::unique_ptr<push::WakingTaskStore> task_store;

  /// Sets TaskServiceOptions::vet_push_config and on_commit.
  void Connect(tasks::TaskServiceOptions& options);
  /// Starts delivering (after the server knows its public base URL, the JWT issuer).
  void Start(boost::asio::any_io_executor io, const Config& config, const core::Clock& clock,
             core::IdGenerator& ids, const std::string& issuer);
  /// Stops the worker and the keys' refreshing (before the backend closes).
  void Stop();
};

/// Push over the backend's push store `store` (which outlives the setup) and its signing keys
/// (server_secrets.hpp: in `server_keys`, the backend's, when given, else under <data_dir>/keys);
/// push URLs are vetted by `egress`'s guard and delivered through its client (`egress` must
/// outlive the setup). Errors name the bad setting.
core::Result<std::unique_ptr<PushSetup>> OpenPush(const Config& config, storage::PushStore& store,
                                                  storage::ServerKeys* server_keys,
                                                  storage::TaskStore& tasks,
                                                  const core::Clock& clock, core::IdGenerator& ids,
                                                  const EgressSetup& egress);

}  // namespace a2ad::app

#pragma once
// An extension as one registration (issue 34): an ExtensionModule gives the server what it
// adds at each startup step, and ExtensionModules is the list the server walks at every step,
// in list order. Adding an extension is: write a module (in the extension's folder, ext/<name>/)
// and add it to the one list (app/extension_modules.cpp). Nothing else in app/ names it.
//
// The steps, in the order the server takes them (app/server_parts.hpp's components):
//   1. Migrations   the tables it keeps in the task store's database, applied when the store
//                   opens (`serve`) and by `a2ad migrate`. Before the store exists.
//   2. NodeKinds    the workflow node kinds it adds ("<vendor>.<kind>"), registered with
//                   workflow::NodeKindRegistry before the first workflow is read (the first
//                   read seals the registry: immutable while serving).
//   3. OpenServices what it keeps over the open store (its store, caches, feeds). The store step.
//   4. ConfigureTasks its say in the task service's options (e.g. prepare_new_task), before the
//                   task service is made. A module chains a hook another module set before it.
//   5. MakeSurfaces its A2A extensions (URI, card entry, operations, view: transport::Extension)
//                   and its routes (console pages among them), once the task service exists.
//                   Its extensions go on the ExtensionRegistry, which the card, both A2A
//                   bindings and gRPC read; its routes go on the router once it is made.
// And its part in the server's lifecycle: Start (background work, once unfinished runs are
// re-driven and before connections are accepted), Stop (shutting down: take no new work, with
// the surfaces), Close (the I/O threads ended: let go of what ran on them).
//
// Ownership: the server owns the list; it outlives the task service's hooks, the operations and
// the routes a module gives out, which may point into the module. Threads: every hook runs on
// the main thread before serving, but Stop (an I/O thread, the signal handler).
#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/storage/backend.hpp"
#include "a2ad/storage/schema_migrations.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/extensions.hpp"
#include "a2ad/transport/router.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"

namespace a2ad::ext {

/// A node kind a module adds, under a type id of its own namespace ("<vendor>.<kind>").
struct NodeKindEntry {
  std::string type_id;
  std::unique_ptr<const workflow::NodeKind> kind;
};

/// What a module's services may use: the open store. Outlives the module's services.
struct ServiceContext {
  storage::Backend& backend;
  const core::Clock& clock;
};

/// What a module's surfaces may use: the task service and the server's I/O context, ids and
/// clock, and the server's bound on a stream's queue. Outlives the surfaces.
struct SurfaceContext {
  tasks::TaskService& service;
  boost::asio::any_io_executor io;
  const core::Clock& clock;
  core::IdGenerator& ids;
  size_t stream_queue_limit = 1024;  // --stream-queue-limit
};

/// What a module adds to the surfaces.
struct Surfaces {
  /// A2A extensions: card entry, operations (every binding), view. Registered in list order.
  std::vector<transport::Extension> extensions;
  /// Routes of the router's index (transport::Route), added after the built-in ones.
  std::vector<transport::Route> routes;
};

class ExtensionModule {
 public:
  virtual ~ExtensionModule() = default;
  /// The module's name, for the log and its errors (e.g. "opt").
  virtual std::string_view Name() const = 0;
  /// 1. Its tables' migrations (storage/schema_migrations.hpp); none by default. Pure: also
  /// called by `a2ad migrate`, which makes nothing else of the module.
  virtual std::vector<storage::ComponentMigrations> Migrations() const { return {}; }
  /// 2. Its node kinds; none by default. Pure (a kind does no I/O: nodes/node_kind.hpp).
  virtual std::vector<NodeKindEntry> NodeKinds() const { return {}; }
  /// 3. Makes its services over the open store. An error refuses to start (kInvalidParams:
  /// exit 2, else 1).
  virtual core::Result<void> OpenServices(const ServiceContext&) { return core::Ok{}; }
  /// 4. Its say in the task service's options.
  virtual void ConfigureTasks(tasks::TaskServiceOptions&) {}
  /// 5. Its extensions and routes. An error refuses to start.
  virtual core::Result<Surfaces> MakeSurfaces(const SurfaceContext&) { return Surfaces{}; }
  /// Starts its background work. An error refuses to start.
  virtual core::Result<void> Start() { return core::Ok{}; }
  /// Shutting down: takes no new work.
  virtual void Stop() {}
  /// The I/O threads ended: releases what ran on them (timers, loops).
  virtual void Close() {}
};

/// The modules of a server, walked in list order at each step (Stop and Close: in reverse).
/// Thread safety: as ExtensionModule's hooks.
class ExtensionModules {
 public:
  /// Adds `module` at the end of the list. Before the first step.
  void Add(std::unique_ptr<ExtensionModule> module);

  /// 1. Every module's migrations, in list order.
  std::vector<storage::ComponentMigrations> Migrations() const;
  /// 2. Registers every module's node kinds with workflow::NodeKindRegistry. The first refusal
  /// (a kind registered after the first workflow was read, a core. or taken type id), naming
  /// the module.
  core::Result<void> RegisterNodeKinds() const;
  /// 3. Every module's services; stops at the first error, naming the module.
  core::Result<void> OpenServices(const ServiceContext& ctx);
  /// 4. Every module's say in `options`, in list order.
  void ConfigureTasks(tasks::TaskServiceOptions& options);
  /// 5. Registers every module's extensions on `extensions`; returns their routes, in list
  /// order, for the router. Stops at the first error, naming the module.
  core::Result<std::vector<transport::Route>> MakeSurfaces(
      const SurfaceContext& ctx, transport::ExtensionRegistry& extensions);
  /// Starts every module's work; stops at the first error, naming the module.
  core::Result<void> Start();
  void Stop();
  void Close();

 private:
  std::vector<std::unique_ptr<ExtensionModule>> modules_;
};

}  // namespace a2ad::ext

#pragma once
// The Objective-Plan-Task extension as one module (ext/extension_module.hpp; docs/OPT.md): its
// tables (component "opt"), its store over the task store's database following the tasks
// (OptStore::FollowTasks) and the objective stream (OptFeed), the message hook that joins an
// objective by message (TaskServiceOptions::prepare_new_task), the extension itself (card
// entry, methods: opt_extension.hpp) and the run outbox worker (OptRunner), started once
// unfinished runs are re-driven and stopped with the surfaces. No node kinds, no routes.
//
// Thread safety: as ExtensionModule's hooks.
#include <memory>

#include "a2ad/ext/extension_module.hpp"
#include "a2ad/ext/opt/opt_feed.hpp"
#include "a2ad/ext/opt/opt_model.hpp"
#include "a2ad/ext/opt/opt_runner.hpp"
#include "a2ad/ext/opt/opt_store.hpp"

namespace a2ad::ext::opt {

class OptModule final : public ExtensionModule {
 public:
  /// `limits`: --opt-max-plans-per-objective and --opt-max-tasks-per-plan (the card says them).
  explicit OptModule(Limits limits) : limits_(limits) {}

  std::string_view Name() const override { return "opt"; }
  /// OptStore::Migrations().
  std::vector<storage::ComponentMigrations> Migrations() const override;
  /// The store (following the tasks) and the feed.
  core::Result<void> OpenServices(const ServiceContext& ctx) override;
  /// prepare_new_task: MakeOptMessageHook. Needs OpenServices first.
  void ConfigureTasks(tasks::TaskServiceOptions& options) override;
  /// The runner (woken by the store) and the extension. Needs OpenServices first.
  core::Result<Surfaces> MakeSurfaces(const SurfaceContext& ctx) override;
  /// The runner works the outbox.
  core::Result<void> Start() override;
  /// The runner takes no new row.
  void Stop() override;
  /// The runner goes (its loop ran on the I/O threads).
  void Close() override;

 private:
  Limits limits_;
  const core::Clock* clock_ = nullptr;
  std::unique_ptr<OptStore> store_;
  std::unique_ptr<OptFeed> feed_;
  std::unique_ptr<OptRunner> runner_;
};

}  // namespace a2ad::ext::opt

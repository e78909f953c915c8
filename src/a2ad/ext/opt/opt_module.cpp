#include "a2ad/ext/opt/opt_module.hpp"

#include "a2ad/ext/opt/opt_extension.hpp"

namespace a2ad::ext::opt {

std::vector<storage::ComponentMigrations> OptModule::Migrations() const {
  return {OptStore::Migrations()};
}

core::Result<void> OptModule::OpenServices(const ServiceContext& ctx) {
  clock_ = &ctx.clock;
  // Plan tasks follow their A2A tasks in the tasks' own commits; the feed streams the
  // objectives' events (objectives/subscribe).
  store_ = std::make_unique<OptStore>(ctx.backend, limits_);
  store_->FollowTasks();
  feed_ = std::make_unique<OptFeed>(*store_);
  return core::Ok{};
}

void OptModule::ConfigureTasks(tasks::TaskServiceOptions& options) {
  // A message carrying opt/v1/objective creates or joins that objective.
  options.prepare_new_task = MakeOptMessageHook(*store_, *clock_);
}

core::Result<Surfaces> OptModule::MakeSurfaces(const SurfaceContext& ctx) {
  // Plans executed as runs (opt_runner.hpp): the store's outbox, worked once recovery has
  // re-driven the runs that were going (Start).
  runner_ = std::make_unique<OptRunner>(*store_, ctx.service, ctx.io, ctx.clock);
  store_->SetListener({[feed = feed_.get()](const std::string& id) { feed->Poke(id); },
                       [runner = runner_.get()] { runner->Wake(); }});
  OptExtensionDeps deps;
  deps.store = store_.get();
  deps.feed = feed_.get();
  deps.ids = &ctx.ids;
  deps.clock = &ctx.clock;
  deps.check_skill = [&service = ctx.service](const std::string& skill,
                                              const boost::json::object& inputs) {
    return service.CheckRunInputs(skill, inputs);
  };
  deps.stream_queue_limit = ctx.stream_queue_limit;
  Surfaces out;
  out.extensions.push_back(MakeOptExtension(std::move(deps)));
  return out;
}

core::Result<void> OptModule::Start() {
  runner_->Start();
  return core::Ok{};
}

void OptModule::Stop() {
  if (runner_) runner_->Stop();
}

void OptModule::Close() { runner_.reset(); }

}  // namespace a2ad::ext::opt

#include "a2ad/ext/extension_module.hpp"

#include <utility>

#include "a2ad/workflow/nodes/registry.hpp"

namespace a2ad::ext {
namespace {

// `error` with the module's name in front of its message.
core::Error Naming(const ExtensionModule& module, core::Error error) {
  error.message = "extension module '" + std::string(module.Name()) + "': " + error.message;
  return error;
}

}  // namespace

void ExtensionModules::Add(std::unique_ptr<ExtensionModule> module) {
  modules_.push_back(std::move(module));
}

std::vector<storage::ComponentMigrations> ExtensionModules::Migrations() const {
  std::vector<storage::ComponentMigrations> out;
  for (const auto& m : modules_)
    for (auto& c : m->Migrations()) out.push_back(std::move(c));
  return out;
}

core::Result<void> ExtensionModules::RegisterNodeKinds() const {
  for (const auto& m : modules_)
    for (auto& entry : m->NodeKinds())
      if (auto added =
              workflow::NodeKindRegistry::Register(std::move(entry.type_id), std::move(entry.kind));
          !added)
        return Naming(*m, std::move(added).error());
  return core::Ok{};
}

core::Result<void> ExtensionModules::OpenServices(const ServiceContext& ctx) {
  for (const auto& m : modules_)
    if (auto opened = m->OpenServices(ctx); !opened) return Naming(*m, std::move(opened).error());
  return core::Ok{};
}

void ExtensionModules::ConfigureTasks(tasks::TaskServiceOptions& options) {
  for (const auto& m : modules_) m->ConfigureTasks(options);
}

core::Result<std::vector<transport::Route>> ExtensionModules::MakeSurfaces(
    const SurfaceContext& ctx, transport::ExtensionRegistry& extensions) {
  std::vector<transport::Route> routes;
  for (const auto& m : modules_) {
    auto made = m->MakeSurfaces(ctx);
    if (!made) return Naming(*m, std::move(made).error());
    for (auto& e : made->extensions) extensions.Register(std::move(e));
    for (auto& r : made->routes) routes.push_back(std::move(r));
  }
  return routes;
}

core::Result<void> ExtensionModules::Start() {
  for (const auto& m : modules_)
    if (auto started = m->Start(); !started) return Naming(*m, std::move(started).error());
  return core::Ok{};
}

void ExtensionModules::Stop() {
  for (auto it = modules_.rbegin(); it != modules_.rend(); ++it) (*it)->Stop();
}

void ExtensionModules::Close() {
  for (auto it = modules_.rbegin(); it != modules_.rend(); ++it) (*it)->Close();
}

}  // namespace a2ad::ext

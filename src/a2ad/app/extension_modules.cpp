#include "a2ad/app/extension_modules.hpp"

#include <memory>

#include "a2ad/ext/opt/opt_module.hpp"
#include "a2ad/ext/pause/pause_module.hpp"

namespace a2ad::app {

ext::ExtensionModules MakeExtensionModules(const Config& config) {
  ext::ExtensionModules modules;
  modules.Add(std::make_unique<ext::pause::PauseModule>());
  ext::opt::Limits opt_limits;
  opt_limits.max_plans_per_objective = config.opt_max_plans_per_objective;
  opt_limits.max_tasks_per_plan = config.opt_max_tasks_per_plan;
  modules.Add(std::make_unique<ext::opt::OptModule>(opt_limits));
  return modules;
}

}  // namespace a2ad::app

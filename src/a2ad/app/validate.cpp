// `a2ad validate FILE...` (app/config.hpp RunValidate): workflow definitions checked as the
// server loads them (workflow::LoadWorkflowFiles, with the extension modules' node kinds), for
// authors.
#include <cstdio>
#include <filesystem>

#include "a2ad/app/config.hpp"
#include "a2ad/app/extension_modules.hpp"
#include "a2ad/workflow/definition.hpp"

namespace a2ad::app {

int RunValidate(const std::vector<std::string>& files) {
  // The extension modules' node kinds, as the server registers them before reading workflows.
  if (auto kinds = MakeExtensionModules(Config{}).RegisterNodeKinds(); !kinds) {
    std::fprintf(stderr, "a2ad: %s\n", kinds.error().message.c_str());
    return 1;
  }
  std::vector<std::filesystem::path> paths(files.begin(), files.end());
  const workflow::LoadedWorkflows loaded = workflow::LoadWorkflowFiles(paths);
  for (const auto& w : loaded.workflows)
    std::printf("ok     %s %s: %zu node(s), %zu edge(s)\n", w.id.c_str(), w.version.c_str(),
                w.nodes.size(), w.edges.size());
  for (const auto& why : loaded.refusals) std::printf("refused %s\n", why.c_str());
  return loaded.refusals.empty() ? 0 : 1;
}

}  // namespace a2ad::app

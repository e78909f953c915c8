#pragma once
// The pause extension as one module (ext/extension_module.hpp; docs/PAUSE.md): only its
// surfaces, the extension of pause_extension.hpp (card entry, three operations, view). Its
// state lives in the task log (tasks/pause.hpp): no tables, services, node kinds or routes.
//
// Thread safety: as ExtensionModule's hooks.
#include "a2ad/ext/extension_module.hpp"

namespace a2ad::ext::pause {

class PauseModule final : public ExtensionModule {
 public:
  std::string_view Name() const override { return "pause"; }
  /// MakePauseExtension over the task service.
  core::Result<Surfaces> MakeSurfaces(const SurfaceContext& ctx) override;
};

}  // namespace a2ad::ext::pause

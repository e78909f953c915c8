#include "a2ad/ext/pause/pause_module.hpp"

#include "a2ad/ext/pause/pause_extension.hpp"

namespace a2ad::ext::pause {

core::Result<Surfaces> PauseModule::MakeSurfaces(const SurfaceContext& ctx) {
  Surfaces out;
  out.extensions.push_back(MakePauseExtension(ctx.service));
  return out;
}

}  // namespace a2ad::ext::pause

// A build without the console (-DA2AD_CONSOLE=OFF): no assets; /console/ answers 404.
#include "a2ad/transport/console/console_assets.hpp"

namespace a2ad::transport {

std::span<const ConsoleAsset> ConsoleAssets() { return {}; }

}  // namespace a2ad::transport

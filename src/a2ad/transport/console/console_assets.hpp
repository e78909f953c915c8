#pragma once
// The operator console's files (console/ in the source tree), compiled into the binary by
// the build (console/build.mjs writes their definition): served at /console/ by
// console_routes.hpp, with no file read at run time.
#include <span>
#include <string_view>

namespace a2ad::transport {

struct ConsoleAsset {
  std::string_view path;          // "/console/index.html", "/console/assets/index-<hash>.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view body;
  std::string_view gzip;  // the body gzipped (level 9), for a client that accepts it
  bool immutable;         // a hashed asset: its name changes with its bytes
};

/// Every file of the console's build; empty when the binary was built without it
/// (-DA2AD_CONSOLE=OFF).
std::span<const ConsoleAsset> ConsoleAssets();

}  // namespace a2ad::transport

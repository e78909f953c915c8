#pragma once
// The extensions this server runs: the one list of extension modules (ext/extension_module.hpp)
// that `a2ad serve` walks at each startup step, `a2ad migrate` asks for their tables and
// `a2ad validate` for their node kinds. Adding an extension is one line here
// (extension_modules.cpp), once its module is written.
//
// Thread safety: call from the main thread.
#include "a2ad/app/config.hpp"
#include "a2ad/ext/extension_module.hpp"

namespace a2ad::app {

/// The server's modules, in the order they are walked (the card lists their extensions in it).
ext::ExtensionModules MakeExtensionModules(const Config& config);

/// `a2ad serve` with `modules` instead of MakeExtensionModules(config)'s (RunServer(config)
/// is this with those). For tests that add a module of their own.
int RunServer(const Config& config, ext::ExtensionModules modules);

}  // namespace a2ad::app

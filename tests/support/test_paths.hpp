#pragma once
// Paths the integration tests share: the server binary under test, and a fresh scratch
// directory per test (named after the test, emptied first; the test removes it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace a2ad::testing {

inline std::string A2adBinary() { return std::string(A2AD_BINARY_DIR) + "/src/a2ad/cli/a2ad"; }

/// A new empty directory for the running test, one level under the temporary directory (a
/// parameterized test's name "Name/1" is flattened, so removing the directory leaves nothing).
inline std::filesystem::path FreshTestDir(const std::string& prefix) {
  namespace fs = std::filesystem;
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : name)
    if (c == '/') c = '_';
  const fs::path dir =
      fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace a2ad::testing

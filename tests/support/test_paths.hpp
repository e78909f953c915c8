#pragma once
// Paths the integration tests share: the server binary under test, and a fresh scratch
// directory per test (named after the test, emptied first; the test removes it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace a2ad::testing {

inline std::string A2adBinary() { return std::string(A2AD_BINARY_DIR) + "/src/a2ad/cli/a2ad"; }

inline std::filesystem::path FreshTestDir(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace a2ad::testing

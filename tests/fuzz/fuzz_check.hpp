#pragma once
// Invariant checks of the fuzz targets: a broken invariant prints what broke and aborts, so
// libFuzzer reports it as a crash and saves the input (tests/fuzz/README.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace a2ad::fuzz {

[[noreturn]] inline void InvariantFailed(const char* expr, const char* file, int line,
                                         std::string_view detail) {
  std::fprintf(stderr, "\n==== fuzz invariant broken: %s\n     at %s:%d\n", expr, file, line);
  if (!detail.empty())
    std::fprintf(stderr, "     %.*s\n", static_cast<int>(std::min<size_t>(detail.size(), 4000)),
                 detail.data());
  std::abort();
}

}  // namespace a2ad::fuzz

/// FUZZ_CHECK(cond, detail): `detail` (a std::string) is only built when `cond` fails.
#define FUZZ_CHECK(cond, detail)                                                     \
  do {                                                                               \
    if (!(cond)) ::a2ad::fuzz::InvariantFailed(#cond, __FILE__, __LINE__, (detail)); \
  } while (0)

#pragma once
// Logging: spdlog behind a tiny facade so modules need not include spdlog headers.
// One logger, made on first use, writes "<UTC time> <level> <message>" lines to stderr.
//
// Thread safety: every function may be called from any thread at once (spdlog's
// thread-safe logger; its level is atomic). SetThreadName names the calling thread only.
#include <string_view>

namespace a2ad::core {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

/// Parses "trace|debug|info|warn|error|off". Returns false on anything else.
bool ParseLogLevel(std::string_view text, LogLevel& out);
void SetLogLevel(LogLevel level);

void LogDebug(std::string_view msg);
void LogInfo(std::string_view msg);
void LogWarn(std::string_view msg);
void LogError(std::string_view msg);

}  // namespace a2ad::core

namespace a2ad::core {

/// Names the calling thread (at most 15 characters are kept), so that `top -H`, `perf` and
/// `/proc/<pid>/task/*/comm` tell the I/O threads, the store's writer and the others apart.
void SetThreadName(std::string_view name);

}  // namespace a2ad::core

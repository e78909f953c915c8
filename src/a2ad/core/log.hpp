#pragma once
// Logging: spdlog behind a tiny facade so modules need not include spdlog headers. One logger,
// made on first use, writes one line per entry to stderr, in one of two formats:
//   text (default): "<UTC time> <level> <message> key=value key2=\"a value\""
//   json:           {"time":"...","level":"info","msg":"...","key":"value","n":3}
// An entry is a message and fields (LogField: a key and a text, integer, number or boolean):
// what an operator filters on (route, status, taskId, traceId...), never secrets.
//
// Thread safety: every function may be called from any thread at once (spdlog's
// thread-safe logger; its level is atomic). SetLogFormat before logging starts (at startup).
// SetThreadName names the calling thread only.
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <variant>

namespace a2ad::core {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };
enum class LogFormat { kText, kJson };

/// Parses "trace|debug|info|warn|error|off". Returns false on anything else.
bool ParseLogLevel(std::string_view text, LogLevel& out);
void SetLogLevel(LogLevel level);
/// Parses "text|json". Returns false on anything else.
bool ParseLogFormat(std::string_view text, LogFormat& out);
void SetLogFormat(LogFormat format);
/// True when entries of `level` are written (to skip building fields that would be dropped).
bool LogEnabled(LogLevel level);

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, int64_t v) : key(k), value(v) {}
  LogField(std::string_view k, int v) : key(k), value(int64_t{v}) {}
  LogField(std::string_view k, size_t v) : key(k), value(static_cast<int64_t>(v)) {}
  LogField(std::string_view k, double v) : key(k), value(v) {}
  LogField(std::string_view k, bool v) : key(k), value(v) {}
  std::string_view key;
  std::variant<std::string_view, int64_t, double, bool> value;
};

/// One entry with fields (empty text fields are left out).
void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields);

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

#!/usr/bin/env bash
# Source rules a compiler cannot check. Exit 1 naming each violation.
#   tests/lint/check_sources.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: check_sources.sh SOURCE_DIR}"
fail=0
violation() { echo "lint: $*" >&2; fail=1; }

# One JSON reader and one JSON writer (protocol/json_parse.hpp, protocol/json_text.hpp): the
# reader refuses what cannot be written back (1e999, duplicate names), and the writer cannot
# write Infinity or NaN. Nothing in src/ may go around them. The one other writer is
# protocol/jcs.cpp, RFC 8785 canonical JSON: bytes to sign or hash, never sent or stored as
# such. It writes strings through json_text's AppendJsonString and numbers itself, and uses no
# Boost serializer, so the first rule below needs no exception for it; the second keeps its
# callers to the signing code (a new caller is added to its list by name).
while IFS= read -r hit; do
  violation "JSON written around protocol::SerializeJson / JsonTextWriter: $hit"
done < <(grep -rnE '(boost::)?json::serialize\(|json::serializer\b' src --include='*.cpp' --include='*.hpp' |
         grep -vE '^src/a2ad/protocol/json_text\.cpp:' | grep -vE ':[0-9]+:\s*//' || true)
while IFS= read -r hit; do
  violation "canonical JSON (protocol/jcs.hpp) outside the signing code: $hit"
done < <(grep -rnE '\b(CanonicalJson|AppendCanonicalNumber)\(' src --include='*.cpp' --include='*.hpp' |
         grep -vE '^src/a2ad/protocol/(jcs|jws)\.(cpp|hpp):|^src/a2ad/protocol/card_signature\.cpp:' |
         grep -vE ':[0-9]+:\s*//' || true)
while IFS= read -r hit; do
  violation "JSON read around protocol::ParseJson: $hit"
done < <(grep -rnE '(boost::)?json::(parse|parser|stream_parser)\b' src --include='*.cpp' --include='*.hpp' |
         grep -vE ':[0-9]+:\s*//' || true)

# Regexes over caller-supplied text run in linear time without per-character recursion
# (workflow::CompileLinearTimeRegex): the default std::regex matcher overflows the stack on a
# long subject, which kills the process.
while IFS= read -r hit; do
  violation "std::regex built around workflow::CompileLinearTimeRegex: $hit"
done < <(grep -rnE 'std::regex([^_a-z]|$)' src --include='*.cpp' --include='*.hpp' |
         grep -vE '^src/a2ad/workflow/answer_schema\.(cpp|hpp):' | grep -vE ':[0-9]+:\s*//' || true)

exit $fail

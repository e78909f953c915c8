#pragma once
// Byte encodings shared by page tokens, interrupt tokens, JWS/JWKS and derived ids.
//
// Thread safety: pure functions.
#include <optional>
#include <string>
#include <string_view>

namespace a2ad::core {

/// RFC 4648 §5 base64url without padding.
std::string Base64UrlEncode(std::string_view bytes);
/// RFC 4648 §4 base64 with padding (ProtoJSON's `bytes`).
std::string Base64Encode(std::string_view bytes);
/// Inverse of Base64UrlEncode; trailing '=' padding is tolerated. nullopt for characters
/// outside the alphabet or an impossible length.
std::optional<std::string> Base64UrlDecode(std::string_view text);
/// RFC 4648 base64 as ProtoJSON reads `bytes`: the standard or the URL alphabet, padding
/// optional. nullopt for other characters or an impossible length.
std::optional<std::string> Base64Decode(std::string_view text);
/// Lowercase hexadecimal.
std::string HexEncode(std::string_view bytes);

}  // namespace a2ad::core

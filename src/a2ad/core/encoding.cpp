#include "a2ad/core/encoding.hpp"

#include <cstdint>

namespace a2ad::core {

namespace {

std::string Encode(std::string_view in, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((in.size() * 4 + 2) / 3);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    acc = (acc << 8) | static_cast<uint8_t>(c);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += alphabet[(acc << (6 - bits)) & 63];
  if (pad)
    while (out.size() % 4 != 0) out += '=';
  return out;
}

}  // namespace

std::string Base64UrlEncode(std::string_view in) {
  return Encode(in, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", false);
}

std::string Base64Encode(std::string_view in) {
  return Encode(in, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", true);
}

namespace {

// `any`: both alphabets, and bits past the last whole byte ignored (ProtoJSON's reading);
// else base64url only, canonical.
std::optional<std::string> Decode(std::string_view text, bool any) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '-' || (any && c == '+'))
      v = 62;
    else if (c == '_' || (any && c == '/'))
      v = 63;
    else
      return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Only the canonical spelling: the bits past the last whole byte must be zero, so a token
  // or signature has exactly one text form (its last character cannot be swapped for
  // another one that decodes to the same bytes).
  if (!any && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::optional<std::string> Base64UrlDecode(std::string_view text) { return Decode(text, false); }

std::optional<std::string> Base64Decode(std::string_view text) { return Decode(text, true); }

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    out += kHex[static_cast<uint8_t>(c) >> 4];
    out += kHex[static_cast<uint8_t>(c) & 15];
  }
  return out;
}

}  // namespace a2ad::core

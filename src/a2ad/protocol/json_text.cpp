#include "a2ad/protocol/json_text.hpp"

#include <array>
#include <charconv>

namespace a2ad::protocol {

namespace {

// For each byte: 0 = copied as is; 'u' = \u00xx; anything else = that letter after '\'.
constexpr std::array<char, 256> MakeEscapes() {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}
constexpr std::array<char, 256> kEscapes = MakeEscapes();
constexpr char kHex[] = "0123456789abcdef";

// Chunk size for boost::json::serializer::read. Values that fit are written without the
// serializer suspending (suspending is what allocates its stack).
constexpr size_t kChunk = 4096;

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  const char* run = s.data();
  const char* const end = run + s.size();
  for (const char* p = run; p != end; ++p) {
    const char e = kEscapes[static_cast<unsigned char>(*p)];
    if (e == 0) continue;
    out.append(run, static_cast<size_t>(p - run));
    run = p + 1;
    if (e != 'u') {
      const char esc[2] = {'\\', e};
      out.append(esc, 2);
    } else {
      const auto c = static_cast<unsigned char>(*p);
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(esc, 6);
    }
  }
  out.append(run, static_cast<size_t>(end - run));
  out.push_back('"');
}

void AppendJsonInt(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

namespace {

size_t EstimateParts(const std::vector<Part>& parts) {
  size_t n = 2;
  for (const auto& p : parts) {
    n += 48 + p.text.size() + p.filename.size() + p.media_type.size();
    if (!p.data.is_null()) n += 64;
    if (!p.metadata.empty()) n += 64;
  }
  return n;
}

size_t EstimateStrings(const std::vector<std::string>& v) {
  size_t n = 24;
  for (const auto& s : v) n += 3 + s.size();
  return n;
}

size_t EstimateMessage(const Message& m) {
  size_t n = 96 + m.message_id.size() + m.context_id.size() + m.task_id.size();
  n += EstimateParts(m.parts);
  if (!m.metadata.empty()) n += 64;
  if (!m.extensions.empty()) n += EstimateStrings(m.extensions);
  if (!m.reference_task_ids.empty()) n += EstimateStrings(m.reference_task_ids);
  return n;
}

}  // namespace

size_t EstimateTaskJsonSize(const Task& t) {
  size_t n = 128 + t.id.size() + t.context_id.size();
  if (t.status.message) n += EstimateMessage(*t.status.message);
  for (const auto& a : t.artifacts) {
    n += 64 + a.artifact_id.size() + a.name.size() + a.description.size();
    n += EstimateParts(a.parts);
    if (!a.metadata.empty()) n += 64;
    if (!a.extensions.empty()) n += EstimateStrings(a.extensions);
  }
  for (const auto& m : t.history) n += EstimateMessage(m);
  if (!t.metadata.empty()) n += 64;
  return n;
}

template <class T>
void JsonTextWriter::Serialize(const T* p) {
  sr_.reset(p);
  char buf[kChunk];
  do {
    boost::json::string_view chunk = sr_.read(buf, sizeof buf);
    out_.append(chunk.data(), chunk.size());
  } while (!sr_.done());
}

void JsonTextWriter::Value(const boost::json::value& v) { Serialize(&v); }
void JsonTextWriter::Object(const boost::json::object& o) { Serialize(&o); }

}  // namespace a2ad::protocol

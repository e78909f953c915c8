#include "a2ad/tasks/accepted_messages.hpp"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <boost/json/array.hpp>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/sha256.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::tasks {
namespace json = boost::json;

namespace {

// `v` as JSON text with every object's members in name order, written without a sorted copy.
// Not RFC 8785 (protocol/jcs.hpp): that sorts by UTF-16 and spells numbers as ECMAScript does,
// and stored snapshots keep digests of these bytes (byte order, json_text.hpp's numbers).
void WriteSorted(protocol::JsonTextWriter& w, const json::value& v) {
  if (v.is_object()) {
    boost::container::small_vector<const json::key_value_pair*, 8> members;
    for (const auto& kv : v.get_object()) members.push_back(&kv);
    std::sort(members.begin(), members.end(),
              [](const auto* a, const auto* b) { return a->key() < b->key(); });
    w.Raw('{');
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) w.Raw(',');
      w.Key(members[i]->key());
      WriteSorted(w, members[i]->value());
    }
    w.Raw('}');
  } else if (v.is_array()) {
    w.Array(v.get_array(),
            [](protocol::JsonTextWriter& out, const json::value& x) { WriteSorted(out, x); });
  } else {
    w.Value(v);
  }
}

std::string Digest(const json::value& parts) {
  std::string text;
  protocol::JsonTextWriter w(text);
  WriteSorted(w, parts);
  return core::Base64UrlEncode(core::DigestBytes(core::Sha256Of(text)));
}

}  // namespace

std::string MessageContentDigest(const json::value& message_json) {
  const json::value* parts =
      message_json.is_object() ? message_json.get_object().if_contains("parts") : nullptr;
  return Digest(parts ? *parts : json::value(json::array()));
}

std::string MessageContentDigest(const protocol::Message& message) {
  return MessageContentDigest(json::value(protocol::MessageToJson(message)));
}

namespace {

constexpr std::string_view kAnonymous = protocol::kAnonymousPrincipal;

std::string_view SenderOf(const json::object& payload) {
  for (const char* key : {"caller", "owner"})
    if (const json::value* v = payload.if_contains(key);
        v && v->is_string() && !v->get_string().empty())
      return v->get_string();
  return kAnonymous;
}

// One sender's digests under one messageId: a string, or an array once other content was
// sent under the same messageId.
void AddDigest(json::value& digests, const std::string& digest) {
  if (digests.is_string()) {
    if (digests.get_string() == digest) return;
    digests = json::array{digests, json::value(digest)};
  } else if (digests.is_array()) {
    for (const auto& d : digests.get_array())
      if (d.is_string() && d.get_string() == digest) return;
    digests.get_array().emplace_back(digest);
  } else {
    digests = digest;
  }
}

bool HasDigest(const json::value& digests, std::string_view digest) {
  if (digests.is_string()) return digests.get_string() == digest;
  if (digests.is_array())
    for (const auto& d : digests.get_array())
      if (d.is_string() && d.get_string() == digest) return true;
  return false;
}

}  // namespace

void RecordAcceptedMessage(protocol::RunSnapshot& run, const json::object& payload) {
  const json::value* m = payload.if_contains("message");
  if (!m || !m->is_object()) return;
  const json::value* id = m->get_object().if_contains("messageId");
  if (!id || !id->is_string() || id->get_string().empty()) return;
  if (!run.accepted_messages) run.accepted_messages.emplace();
  json::value& entry = (*run.accepted_messages)[id->get_string()];
  const std::string digest = MessageContentDigest(*m);
  const std::string_view sender = SenderOf(payload);
  if (sender == kAnonymous && !entry.is_object()) {
    AddDigest(entry, digest);  // the shape every snapshot had before callers were told apart
    return;
  }
  if (!entry.is_object()) {
    json::object by_sender;
    if (entry.is_string()) by_sender[kAnonymous] = entry;  // the anonymous caller's, before
    entry = std::move(by_sender);
  }
  json::value& mine = entry.get_object()[sender];
  AddDigest(mine, digest);
}

PriorMessage FindAcceptedMessage(const storage::TaskRecord& record,
                                 const protocol::Message& message, std::string_view caller) {
  if (caller.empty()) caller = kAnonymous;
  const std::string content = MessageContentDigest(message);
  auto compare = [&content](const json::value& digests) {
    return HasDigest(digests, content) ? PriorMessage::kSame : PriorMessage::kDifferent;
  };
  if (record.run.accepted_messages)
    if (const json::value* entry = record.run.accepted_messages->if_contains(message.message_id)) {
      if (entry->is_object()) {
        const json::value* mine = entry->get_object().if_contains(caller);
        return mine ? compare(*mine) : PriorMessage::kNone;
      }
      return caller == kAnonymous ? compare(*entry) : PriorMessage::kNone;
    }
  // Not recorded for anyone. A snapshot older than acceptedMessages (or a task created
  // before it) still has the message in its history, where every message is the
  // anonymous caller's.
  if (caller != kAnonymous) return PriorMessage::kNone;
  auto it = std::find_if(
      record.task.history.begin(), record.task.history.end(), [&](const protocol::Message& m) {
        return m.role == protocol::Role::kUser && m.message_id == message.message_id;
      });
  if (it == record.task.history.end()) return PriorMessage::kNone;
  return MessageContentDigest(*it) == content ? PriorMessage::kSame : PriorMessage::kDifferent;
}

namespace {
// A kRetention key starts "a2a\n" (the form every stored key has had since keys existed, so
// keys stored before the release rules were told apart are kept, as a real client needs);
// a kWhenAddressed key starts "a2a-kit\n".
constexpr std::string_view kRetentionPrefix = "a2a\n";
constexpr std::string_view kReleasablePrefix = "a2a-kit\n";
}  // namespace

std::string A2aDedupKey(std::string_view caller, std::string_view context_id,
                        std::string_view message_id, DedupRelease release) {
  std::string key(release == DedupRelease::kWhenAddressed ? kReleasablePrefix : kRetentionPrefix);
  key.append(caller).append("\n").append(context_id).append("\n").append(message_id);
  return key;
}

std::string_view ReleasableDedupKeyCaller(std::string_view dedup_key) {
  if (!dedup_key.starts_with(kReleasablePrefix)) return {};
  dedup_key.remove_prefix(kReleasablePrefix.size());
  const size_t end = dedup_key.find('\n');
  return end == std::string_view::npos ? std::string_view{} : dedup_key.substr(0, end);
}

}  // namespace a2ad::tasks

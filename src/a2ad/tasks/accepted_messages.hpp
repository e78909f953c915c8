#pragma once
// Replies are idempotent by messageId. The run snapshot keeps, for every user message the
// task accepted (its first message and each accepted reply), a digest of its parts under its
// messageId: run.acceptedMessages{messageId: digest}, folded from a2a.task.submitted and
// a2a.message.received (run_projection.hpp). It lives in the snapshot, not only in the
// history or the log, because those are not the place to rely on for it: a task's history
// is shaped (trimmed) on the way out and its log is pruned by retention.
//
// A reply whose messageId is there with the same parts is a retry: it is answered with the
// task as it is now and writes nothing. The same messageId with other parts is another
// message and is taken as such (A2A asks for unique messageIds, but the A2A conformance kit
// sends several messages of one task under one messageId); its digest joins the first's.
// TaskService::AcceptReply decides this under the task's lock, before anything else about
// the reply (so two racing retries cannot both apply, and a retry finds its reply even if
// that reply already ended the task).
//
// Scope: one task (so one tenant), and the (principal, messageId) pair: two callers may
// each use a messageId. The events carry the principal (a2a.task.submitted: owner;
// a2a.message.received: caller). Stored shape, kept readable by snapshots written before
// callers were told apart (every one of them "anonymous"): acceptedMessages{messageId:
// digests} while only the anonymous principal used that messageId, else acceptedMessages{
// messageId: {principal: digests, ...}}, where digests is one digest (a string) or, once
// other content came under the same messageId, an array of them.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "a2ad/protocol/model.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::tasks {

/// The digest of a message's content: SHA-256 (base64url) of its parts (v1.0 JSON, object
/// members sorted, so member order does not matter), whichever wire version carried it.
std::string MessageContentDigest(const protocol::Message& message);
/// The same for a message already in v1.0 JSON (an event's payload.message).
std::string MessageContentDigest(const boost::json::value& message_json);

/// The fold's part: records payload.message (of a2a.task.submitted or a2a.message.received)
/// in run.acceptedMessages under its sender (payload.caller, else payload.owner, else
/// "anonymous").
void RecordAcceptedMessage(protocol::RunSnapshot& run, const boost::json::object& payload);

enum class PriorMessage {
  kNone,       // not seen: a new reply
  kSame,       // accepted before with the same parts: a retry
  kDifferent,  // accepted before with other parts only: another message, same messageId
};

/// Whether `record`'s task accepted a user message with `message`'s messageId from
/// `caller` (a principal id) before. Snapshots written before run.acceptedMessages existed
/// are answered from the history (for the anonymous caller, the only one there was).
PriorMessage FindAcceptedMessage(const storage::TaskRecord& record,
                                 const protocol::Message& message, std::string_view caller);

/// A message that starts a task is idempotent too, by the task's creation key
/// (storage::TaskRecord::dedup_key): the same caller's same messageId in the same contextId
/// (as the client gave it: "" when it gave none) starts one task, and a retry is answered
/// with that task, whatever happened to the task in between (replies, gates answered, a
/// cancel, a restart). A retry is a retry: a client that lost the first answer must not start
/// a second run. The key is kept for the idempotency retention window
/// (TaskStore::ExpireDedupKeys, `--idempotency-retention-s`, 24 hours by default); after it,
/// the same messageId starts a new task.
///
/// The one exception is the built-in conformance agent (Executor::ReusesFirstMessageIds):
/// the A2A conformance kit reuses one messageId for every task of a session, so its key is
/// made with DedupRelease::kWhenAddressed and given back when its creator sends the task
/// another message or cancels it (a2a.message.received or run.cancelled whose caller is the
/// key's; the fold clears the record's key and the store gives it back,
/// storage::TaskCommit::releases_dedup_key). No workflow a user loads can ask for that.
enum class DedupRelease {
  kRetention,      // kept for the retention window: every real skill
  kWhenAddressed,  // given back when the creator addresses the task: the conformance agent
};
std::string A2aDedupKey(std::string_view caller, std::string_view context_id,
                        std::string_view message_id,
                        DedupRelease release = DedupRelease::kRetention);
/// The caller part of a key made by A2aDedupKey with DedupRelease::kWhenAddressed; "" for
/// every other key (kRetention keys, a REST Idempotency-Key, ""): those are never given back
/// by addressing the task.
std::string_view ReleasableDedupKeyCaller(std::string_view dedup_key);

}  // namespace a2ad::tasks

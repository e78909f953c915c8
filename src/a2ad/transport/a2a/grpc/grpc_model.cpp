#include "a2ad/transport/a2a/grpc/grpc_model.hpp"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/timestamp.pb.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::transport::grpc_model {
namespace json = boost::json;
namespace pb = google::protobuf;
namespace v1 = lf::a2a::v1;
using Why = std::optional<std::string>;

// The model's enums carry the proto's numbers.
static_assert(static_cast<int>(protocol::TaskState::kAuthRequired) == v1::TASK_STATE_AUTH_REQUIRED);
static_assert(static_cast<int>(protocol::TaskState::kCanceled) == v1::TASK_STATE_CANCELED);
static_assert(static_cast<int>(protocol::Role::kAgent) == v1::ROLE_AGENT);

namespace {

// Protobuf strings are UTF-8: bytes that are not are replaced, as the JSON writer does.
std::string U(std::string_view s) { return protocol::WellFormedUtf8(s); }

void ToValue(const json::value& from, pb::Value* to);

void ToStruct(const json::object& from, pb::Struct* to) {
  auto& fields = *to->mutable_fields();
  for (const auto& [k, v] : from) ToValue(v, &fields[U(k)]);
}

// JSON numbers are doubles in a google.protobuf.Value, as ProtoJSON reads them.
void ToValue(const json::value& from, pb::Value* to) {
  switch (from.kind()) {
    case json::kind::null:
      to->set_null_value(pb::NULL_VALUE);
      break;
    case json::kind::bool_:
      to->set_bool_value(from.get_bool());
      break;
    case json::kind::int64:
      to->set_number_value(static_cast<double>(from.get_int64()));
      break;
    case json::kind::uint64:
      to->set_number_value(static_cast<double>(from.get_uint64()));
      break;
    case json::kind::double_:  // no JSON spelling for NaN or infinities: null, as written
      if (std::isfinite(from.get_double()))
        to->set_number_value(from.get_double());
      else
        to->set_null_value(pb::NULL_VALUE);
      break;
    case json::kind::string:
      to->set_string_value(U(from.get_string()));
      break;
    case json::kind::array: {
      auto* list = to->mutable_list_value();
      for (const auto& item : from.get_array()) ToValue(item, list->add_values());
      break;
    }
    case json::kind::object:
      ToStruct(from.get_object(), to->mutable_struct_value());
      break;
  }
}

Why ToProto(const protocol::Part& from, v1::Part* to) {
  switch (from.kind) {
    case protocol::Part::Kind::kText:
      to->set_text(U(from.text));
      break;
    case protocol::Part::Kind::kRaw: {
      auto bytes = core::Base64Decode(from.text);
      if (!bytes) return "a raw part's text is not base64";
      to->set_raw(std::move(*bytes));
      break;
    }
    case protocol::Part::Kind::kUrl:
      to->set_url(U(from.text));
      break;
    case protocol::Part::Kind::kData:
      ToValue(from.data, to->mutable_data());
      break;
  }
  if (!from.metadata.empty()) ToStruct(from.metadata, to->mutable_metadata());
  to->set_filename(U(from.filename));
  to->set_media_type(U(from.media_type));
  return std::nullopt;
}

template <class Repeated>
Why Parts(const std::vector<protocol::Part>& from, Repeated* to) {
  to->Reserve(static_cast<int>(from.size()));
  for (const auto& p : from)
    if (auto why = ToProto(p, to->Add())) return why;
  return std::nullopt;
}

Why ToProto(const protocol::Artifact& from, v1::Artifact* to) {
  to->set_artifact_id(U(from.artifact_id));
  to->set_name(U(from.name));
  to->set_description(U(from.description));
  if (auto why = Parts(from.parts, to->mutable_parts())) return why;
  if (!from.metadata.empty()) ToStruct(from.metadata, to->mutable_metadata());
  for (const auto& e : from.extensions) to->add_extensions(U(e));
  return std::nullopt;
}

Why MessageInto(const protocol::Message& from, v1::Message* to) {
  to->set_message_id(U(from.message_id));
  to->set_context_id(U(from.context_id));
  to->set_task_id(U(from.task_id));
  to->set_role(static_cast<v1::Role>(static_cast<int>(from.role)));
  if (auto why = Parts(from.parts, to->mutable_parts())) return why;
  if (!from.metadata.empty()) ToStruct(from.metadata, to->mutable_metadata());
  for (const auto& e : from.extensions) to->add_extensions(U(e));
  for (const auto& id : from.reference_task_ids) to->add_reference_task_ids(U(id));
  return std::nullopt;
}

Why ToProto(const protocol::TaskStatus& from, v1::TaskStatus* to) {
  to->set_state(static_cast<v1::TaskState>(static_cast<int>(from.state)));
  if (from.message)
    if (auto why = MessageInto(*from.message, to->mutable_message())) return why;
  if (from.timestamp_ms) {  // whole milliseconds, as the text form carries them
    auto* ts = to->mutable_timestamp();
    int64_t s = from.timestamp_ms / 1000, ms = from.timestamp_ms % 1000;
    if (ms < 0) {
      --s;
      ms += 1000;
    }
    ts->set_seconds(s);
    ts->set_nanos(static_cast<int32_t>(ms * 1000000));
  }
  return std::nullopt;
}

Why TaskInto(const protocol::Task& from, v1::Task* to) {
  to->set_id(U(from.id));
  to->set_context_id(U(from.context_id));
  if (auto why = ToProto(from.status, to->mutable_status())) return why;
  to->mutable_artifacts()->Reserve(static_cast<int>(from.artifacts.size()));
  for (const auto& a : from.artifacts)
    if (auto why = ToProto(a, to->add_artifacts())) return why;
  to->mutable_history()->Reserve(static_cast<int>(from.history.size()));
  for (const auto& m : from.history)
    if (auto why = MessageInto(m, to->add_history())) return why;
  if (!from.metadata.empty()) ToStruct(from.metadata, to->mutable_metadata());
  return std::nullopt;
}

}  // namespace

Why ToProto(const protocol::Task& from, v1::Task* to) {
  to->Clear();
  return TaskInto(from, to);
}

Why ToProto(const protocol::Message& from, v1::Message* to) {
  to->Clear();
  return MessageInto(from, to);
}

Why ToProto(const protocol::StreamEvent& from, v1::StreamResponse* to) {
  to->Clear();
  switch (from.kind) {
    case protocol::StreamEvent::Kind::kTask:
      return TaskInto(from.task, to->mutable_task());
    case protocol::StreamEvent::Kind::kMessage:
      return MessageInto(from.message, to->mutable_message());
    case protocol::StreamEvent::Kind::kStatusUpdate: {
      const auto& u = from.status_update;
      auto* out = to->mutable_status_update();
      out->set_task_id(U(u.task_id));
      out->set_context_id(U(u.context_id));
      if (auto why = ToProto(u.status, out->mutable_status())) return why;
      if (!u.metadata.empty()) ToStruct(u.metadata, out->mutable_metadata());
      return std::nullopt;
    }
    case protocol::StreamEvent::Kind::kArtifactUpdate: {
      const auto& u = from.artifact_update;
      auto* out = to->mutable_artifact_update();
      out->set_task_id(U(u.task_id));
      out->set_context_id(U(u.context_id));
      if (auto why = ToProto(u.artifact, out->mutable_artifact())) return why;
      out->set_append(u.append);
      out->set_last_chunk(u.last_chunk);
      if (!u.metadata.empty()) ToStruct(u.metadata, out->mutable_metadata());
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// ---- requests: ProtoJSON's DOM without its text ----------------------------------------------

namespace {

// A double as ProtoJSON prints it (the shortest of %.15g and %.17g that reads back), read as
// the JSON parser reads that text: an integral value prints without an exponent below 1e15
// and is then an integer.
std::optional<json::value> NumberToJson(double d) {
  if (!std::isfinite(d)) return std::nullopt;  // printed as a string: the fallback's
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", d);
  if (std::strtod(buf, nullptr) != d) std::snprintf(buf, sizeof buf, "%.17g", d);
  auto v = protocol::ParseJson(buf);
  if (!v) return std::nullopt;
  return std::move(v).value();
}

// Nesting as ParseJson counts it (the document is depth 1): deeper than its limit, the
// fallback's parse refuses the request as it always did.
constexpr int kMaxDepth = static_cast<int>(protocol::JsonParseOptions{}.max_depth);

// Fields the schema does not know (a wire type other than the field's is one): protobuf's
// printer reads those its own way, so the message is left to it.
bool Unknown(const pb::Message& m) { return !m.GetReflection()->GetUnknownFields(m).empty(); }

std::optional<json::value> ValueToJson(const pb::Value& v, int depth);

std::optional<json::value> StructToJson(const pb::Struct& s, int depth) {
  if (depth > kMaxDepth || Unknown(s)) return std::nullopt;
  json::object o;
  o.reserve(s.fields_size());
  for (const auto& [k, v] : s.fields()) {
    auto item = ValueToJson(v, depth + 1);
    if (!item) return std::nullopt;
    o[k] = std::move(*item);
  }
  return o;
}

std::optional<json::value> ValueToJson(const pb::Value& v, int depth) {
  if (Unknown(v)) return std::nullopt;
  switch (v.kind_case()) {
    case pb::Value::kNullValue:
      return json::value(nullptr);
    case pb::Value::kNumberValue:
      return NumberToJson(v.number_value());
    case pb::Value::kStringValue:
      return json::value(v.string_value());
    case pb::Value::kBoolValue:
      return json::value(v.bool_value());
    case pb::Value::kStructValue:
      return StructToJson(v.struct_value(), depth);
    case pb::Value::kListValue: {
      if (depth > kMaxDepth || Unknown(v.list_value())) return std::nullopt;
      json::array a;
      a.reserve(static_cast<size_t>(v.list_value().values_size()));
      for (const auto& item : v.list_value().values()) {
        auto j = ValueToJson(item, depth + 1);
        if (!j) return std::nullopt;
        a.push_back(std::move(*j));
      }
      return a;
    }
    case pb::Value::KIND_NOT_SET:
      break;
  }
  return std::nullopt;  // ProtoJSON refuses a Value without a kind: the fallback says so
}

std::optional<json::value> MessageToDom(const pb::Message& m, int depth);

// Field `f` of `m` (item `i` when repeated), as ProtoJSON writes it; nullopt for a kind this
// does not write (64-bit integers, floating point fields, well-known types but Struct and
// Value, maps): the caller falls back to protobuf's printer.
std::optional<json::value> FieldToJson(const pb::Message& m, const pb::FieldDescriptor* f, int i,
                                       int depth) {
  const pb::Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  using F = pb::FieldDescriptor;
  switch (f->cpp_type()) {
    case F::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = rep ? r->GetRepeatedStringReference(m, f, i, &scratch)
                                 : r->GetStringReference(m, f, &scratch);
      if (f->type() == F::TYPE_BYTES) return json::value(core::Base64Encode(s));
      return json::value(s);
    }
    case F::CPPTYPE_BOOL:
      return json::value(rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f));
    case F::CPPTYPE_INT32:
      return json::value(rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f));
    case F::CPPTYPE_UINT32:
      return json::value(rep ? r->GetRepeatedUInt32(m, f, i) : r->GetUInt32(m, f));
    case F::CPPTYPE_ENUM: {  // by name; a number the enum does not name as the number
      const int n = rep ? r->GetRepeatedEnumValue(m, f, i) : r->GetEnumValue(m, f);
      const pb::EnumValueDescriptor* e = f->enum_type()->FindValueByNumber(n);
      return e ? json::value(e->name()) : json::value(n);
    }
    case F::CPPTYPE_MESSAGE: {
      const pb::Message& sub = rep ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
      return MessageToDom(sub, depth);
    }
    default:
      return std::nullopt;
  }
}

// `m` at `depth` (its fields one deeper).
std::optional<json::value> MessageToDom(const pb::Message& m, int depth) {
  const pb::Descriptor* d = m.GetDescriptor();
  if (d == pb::Struct::descriptor()) return StructToJson(static_cast<const pb::Struct&>(m), depth);
  if (d == pb::Value::descriptor()) return ValueToJson(static_cast<const pb::Value&>(m), depth);
  if (depth > kMaxDepth || Unknown(m)) return std::nullopt;
  if (d->file()->package() == "google.protobuf") return std::nullopt;  // other well-known types
  std::vector<const pb::FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);  // the set ones: ProtoJSON omits the defaults
  json::object o;
  o.reserve(fields.size());
  for (const pb::FieldDescriptor* f : fields) {
    if (f->is_map()) return std::nullopt;
    if (!f->is_repeated()) {
      auto v = FieldToJson(m, f, 0, depth + 1);
      if (!v) return std::nullopt;
      o[f->json_name()] = std::move(*v);
      continue;
    }
    if (depth + 1 > kMaxDepth) return std::nullopt;
    json::array a;
    const int n = m.GetReflection()->FieldSize(m, f);
    a.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      auto v = FieldToJson(m, f, i, depth + 2);
      if (!v) return std::nullopt;
      a.push_back(std::move(*v));
    }
    o[f->json_name()] = std::move(a);
  }
  return o;
}

}  // namespace

std::optional<json::value> RequestToJson(const pb::Message& request) {
  return MessageToDom(request, 1);
}

}  // namespace a2ad::transport::grpc_model

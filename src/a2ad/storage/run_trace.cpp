#include "a2ad/storage/task_store.hpp"

#include "a2ad/core/trace.hpp"

namespace a2ad::storage {

std::string RunTraceparent(const TaskRecord& record) {
  if (!record.run.metadata) return {};
  const auto* ow = record.run.metadata->if_contains("openwop");
  if (!ow || !ow->is_object()) return {};
  const auto* tp = ow->as_object().if_contains("traceparent");
  if (!tp || !tp->is_string() || !core::TraceParent::Parse(tp->as_string())) return {};
  return std::string(tp->as_string());
}

}  // namespace a2ad::storage

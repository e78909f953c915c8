// peer_answer_fuzz: what another agent sends a2ad when a workflow calls it (client/
// peer_card.hpp): its agent card and its tasks and messages, untrusted bytes. The input is
// parsed as JSON (the client's only reader); whatever parses goes through ReadPeerCard,
// NormalizeTask and NormalizeMessage, which never crash, and:
//  - a card that is read names an endpoint and a version a2ad speaks ("1.0" or "0.3");
//  - a normalized task's `state` is one of the nine names the engine's reverse projection
//    knows, and equals status.state; its artifacts are objects with a `parts` array;
//  - the normalized message's parts carry no 0.3 `kind`.
#include <boost/json.hpp>
#include <cstdint>
#include <set>
#include <string>

#include "a2ad/client/peer_card.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "fuzz_check.hpp"

namespace json = boost::json;
using namespace a2ad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = protocol::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed) return 0;
  const json::value& v = parsed.value();
  if (auto card = client::ReadPeerCard(v)) {
    FUZZ_CHECK(!card.value().url.empty(), protocol::SerializeJson(v));
    FUZZ_CHECK(card.value().version == "1.0" || card.value().version == "0.3",
               card.value().version);
  }
  if (!v.is_object()) return 0;
  static const std::set<std::string> kStates{"submitted", "working",  "input-required",
                                             "auth-required", "completed", "failed",
                                             "canceled",  "rejected", "unknown"};
  const json::object task = client::NormalizeTask(v.get_object());
  const std::string state(task.at("state").as_string());
  FUZZ_CHECK(kStates.count(state) == 1, state);
  FUZZ_CHECK(task.at("status").at("state") == task.at("state"), protocol::SerializeJson(task));
  for (const auto& a : task.at("artifacts").as_array())
    FUZZ_CHECK(a.is_object() && a.get_object().at("parts").is_array(), protocol::SerializeJson(a));
  const json::object message = client::NormalizeMessage(v.get_object());
  for (const auto& p : message.at("parts").as_array())
    FUZZ_CHECK(p.is_object() && !p.get_object().contains("kind"), protocol::SerializeJson(p));
  return 0;
}

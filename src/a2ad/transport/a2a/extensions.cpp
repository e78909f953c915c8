#include "a2ad/transport/a2a/extensions.hpp"

#include <algorithm>
#include <stdexcept>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::transport {
namespace json = boost::json;

void ExtensionRegistry::Register(Extension ext) {
  if (ext.uri.empty()) throw std::logic_error("an extension needs a URI");
  for (const auto& e : extensions_)
    if (e.uri == ext.uri) throw std::logic_error("extension '" + ext.uri + "' registered twice");
  for (auto& op : ext.operations) op.extension = ext.uri;
  extensions_.push_back(std::move(ext));
}

json::array ExtensionRegistry::CardEntries() const {
  json::array out;
  for (const auto& e : extensions_) {
    json::object o{{"uri", e.uri}};
    if (!e.description.empty()) o["description"] = e.description;
    o["required"] = e.required;
    if (!e.params.empty()) o["params"] = e.params;
    out.emplace_back(std::move(o));
  }
  return out;
}

void ExtensionRegistry::AddOperations(OperationTable& table) const {
  for (const auto& e : extensions_)
    for (const auto& op : e.operations) table.Add(op);
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

void ExtensionRegistry::Activate(const HttpRequest& request, protocol::CallContext& ctx) const {
  ctx.requested_extensions.clear();
  ctx.activated_extensions.clear();
  constexpr size_t kMaxRequested = 64;  // more is not a client, and each costs a compare
  for (const auto& [name, value] : request.headers) {
    if (!EqualsIgnoreCase(name, kExtensionsHeader) && !EqualsIgnoreCase(name, kExtensionsHeaderV03))
      continue;
    std::string_view rest = value;
    while (!rest.empty() && ctx.requested_extensions.size() < kMaxRequested) {
      const size_t comma = rest.find(',');
      const std::string_view uri = Trim(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (uri.empty()) continue;
      if (std::find(ctx.requested_extensions.begin(), ctx.requested_extensions.end(), uri) !=
          ctx.requested_extensions.end())
        continue;
      ctx.requested_extensions.emplace_back(uri);
      for (const auto& e : extensions_)
        if (e.uri == uri) ctx.activated_extensions.emplace_back(uri);
    }
  }
}

std::optional<core::Error> ExtensionRegistry::CheckRequired(
    const protocol::CallContext& ctx) const {
  for (const auto& e : extensions_)
    if (e.required && !ctx.Activated(e.uri))
      return core::Error(core::ErrorCode::kExtensionSupportRequired,
                         "this agent requires the extension " + e.uri + "; list it in the " +
                             (ctx.version == protocol::WireVersion::kV03 ? kExtensionsHeaderV03
                                                                         : kExtensionsHeader) +
                             " header",
                         {{"uri", e.uri}});
  return std::nullopt;
}

std::function<void(std::string&)> ExtensionRegistry::ViewFor(
    const protocol::CallContext& ctx) const {
  std::vector<const std::function<void(json::value&, protocol::Wire)>*> views;
  for (const auto& e : extensions_)
    if (e.view && ctx.Activated(e.uri)) views.push_back(&e.view);
  if (views.empty()) return {};
  return [views = std::move(views), shape = WireOf(ctx)](std::string& text) {
    auto parsed = protocol::ParseJson(text);
    if (!parsed) return;
    json::value v = std::move(parsed).value();
    for (const auto* view : views) (*view)(v, shape);
    text = protocol::SerializeJson(v);
  };
}

std::optional<std::pair<std::string, std::string>> ExtensionRegistry::EchoHeader(
    const protocol::CallContext& ctx) {
  if (ctx.activated_extensions.empty()) return std::nullopt;
  std::string value;
  for (const auto& uri : ctx.activated_extensions) {
    if (!value.empty()) value += ", ";
    value += uri;
  }
  return std::make_pair(
      std::string(ctx.version == protocol::WireVersion::kV03 ? kExtensionsHeaderV03
                                                             : kExtensionsHeader),
      std::move(value));
}

}  // namespace a2ad::transport

// core.http: a node that calls an HTTP API (issue 16; DIGEST §6.1, §6.3, §7). Start logs
// node.started and, as the node's first effect record, the request it will make (method, url,
// headers, the names of the host secrets to add, the body built from its inputs), so that the
// request is fixed in the log before anything is sent. In flight, Continue asks the executor
// to carry the request out (effects.hpp, spec kind "http"), and once the answer is logged
// completes the node with it ({status, headers, body}) or fails it. A re-drive after a crash
// reads the logged answer and never calls again; a crash between the call and its log repeats
// the call with the same Idempotency-Key (the runner derives it from tenant, run, node and
// the node's execution ordinal, DIGEST §6.1 layer 2).
//
// config:
//   url            string, http(s) (required unless an input port `url` gives it)
//   method         GET | POST | PUT | PATCH | DELETE | HEAD (default GET, POST with a body)
//   headers        {name: string}: literal headers (no credentials: use secretHeaders)
//   secretHeaders  {name: {secret: NAME, prefix?: string}}: values the host holds
//                  (environment A2AD_SECRET_<NAME>), never in the workflow or the log
//   body           any JSON: the request body; else the input port `body`; else, for POST,
//                  PUT and PATCH, the object of all the node's inputs
//   expect         [status | "2xx" ...] (default ["2xx"]): other statuses fail the node
//   responseHeaders [name ...]: the response headers kept in the output (default none)
//   timeoutMs      1..120000 per attempt (default 10000)
//   retry          {maxAttempts 1..10 (default 3), backoffMs 0..60000 (default 500)}: on a
//                  transport error, 429 (Retry-After honoured) and 5xx
// outputs: {status, headers, body} (body: parsed JSON when the answer is JSON, else text).
#include <algorithm>
#include <cctype>

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/workflow/nodes/config_checks.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow::nodes {
namespace json = boost::json;
using protocol::FieldError;
using protocol::IntOr;
using protocol::ObjOr;
using protocol::Str;
using tasks::EventDraft;

namespace {

bool IsMethod(std::string_view m) {
  return m == "GET" || m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE" || m == "HEAD";
}

class HttpCall final : public NodeKind {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    const std::string cfg = path + ".config";
    const json::object& c = n.config;
    if (const json::value* u = c.if_contains("url")) {
      if (!u->is_string() ||
          !(u->get_string().starts_with("http://") || u->get_string().starts_with("https://")))
        return FieldError(cfg + ".url", "expected an http:// or https:// URL");
    } else if (!n.inputs.contains("url")) {
      return FieldError(cfg + ".url", "required (or an input port named url)");
    }
    if (const json::value* m = c.if_contains("method");
        m && (!m->is_string() || !IsMethod(m->get_string())))
      return FieldError(cfg + ".method", "expected GET, POST, PUT, PATCH, DELETE or HEAD");
    if (const json::value* h = c.if_contains("headers")) {
      if (!h->is_object()) return FieldError(cfg + ".headers", "expected an object of strings");
      for (const auto& kv : h->get_object()) {
        std::string lower(kv.key());
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        if (!kv.value().is_string())
          return FieldError(cfg + ".headers." + std::string(kv.key()), "expected a string");
        if (lower == "authorization" || lower == "cookie" || lower == "proxy-authorization" ||
            lower == "host" || lower == "content-length")
          return FieldError(cfg + ".headers." + std::string(kv.key()),
                            "not allowed here (credentials go in secretHeaders; Host and "
                            "Content-Length are set by the host)");
      }
    }
    if (const json::value* h = c.if_contains("secretHeaders")) {
      if (!h->is_object()) return FieldError(cfg + ".secretHeaders", "expected an object");
      for (const auto& kv : h->get_object()) {
        const std::string at = cfg + ".secretHeaders." + std::string(kv.key());
        if (!kv.value().is_object() || Str(kv.value().get_object(), "secret").empty())
          return FieldError(at, "expected {secret: NAME, prefix?: string}");
        for (char ch : Str(kv.value().get_object(), "secret"))
          if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
            return FieldError(at + ".secret", "a secret name is letters, digits and _");
      }
    }
    if (const json::value* e = c.if_contains("expect")) {
      if (!e->is_array() || e->get_array().empty())
        return FieldError(cfg + ".expect", "expected a non-empty array of statuses or \"2xx\"");
      for (const auto& x : e->get_array()) {
        bool ok = (x.is_int64() && x.as_int64() >= 100 && x.as_int64() <= 599) ||
                  (x.is_string() && x.get_string().size() == 3 && x.get_string()[0] >= '1' &&
                   x.get_string()[0] <= '5' && x.get_string().ends_with("xx"));
        if (!ok) return FieldError(cfg + ".expect", "expected statuses (200) or classes (\"2xx\")");
      }
    }
    if (const json::value* rh = c.if_contains("responseHeaders")) {
      if (!rh->is_array())
        return FieldError(cfg + ".responseHeaders", "expected an array of names");
      for (const auto& x : rh->get_array())
        if (!x.is_string())
          return FieldError(cfg + ".responseHeaders", "expected an array of names");
    }
    if (auto t = CheckIntIn(c, "timeoutMs", 1, 120000, cfg); !t) return t;
    if (auto r = CheckRetry(c, cfg); !r) return r;
    return core::Ok{};
  }

  std::vector<EventDraft> Start(const NodeStep& step, const json::object& inputs) const override {
    const Node& n = step.node;
    const json::object& c = n.config;
    std::vector<EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, n.id, StartedPayload(n)));
    json::object req;
    req["kind"] = "http";
    const json::value* url = inputs.if_contains("url");
    if (!url) url = c.if_contains("url");
    if (!url || !url->is_string()) {
      FailNode(out, n, ErrorObj("validation_error", "node '" + n.id + "': no url to call"));
      return out;
    }
    req["url"] = *url;
    const json::value* body = c.if_contains("body");
    if (!body) body = inputs.if_contains("body");
    std::string method(Str(c, "method"));
    if (method.empty()) method = body ? "POST" : "GET";
    if (body)
      req["body"] = *body;
    else if (method == "POST" || method == "PUT" || method == "PATCH")
      req["body"] = inputs;
    req["method"] = method;
    req["headers"] = ObjOr(c, "headers");
    req["secretHeaders"] = ObjOr(c, "secretHeaders");
    req["expect"] = c.contains("expect") ? c.at("expect") : json::value(json::array{"2xx"});
    req["responseHeaders"] =
        c.contains("responseHeaders") ? c.at("responseHeaders") : json::value(json::array());
    req["timeoutMs"] = IntOr(c, "timeoutMs", 10000);
    req["retry"] = RetrySpec(c);
    // The node's execution ordinal in the run: the idempotency key's last varying part.
    req["ordinal"] = step.run.node_executions;
    out.push_back(Ev(protocol::kEvNodeEffect, n.id,
                     json::object{{"effect", "http"}, {"result", json::object{{"request", req}}}}));
    return out;
  }

  Decision Continue(const NodeStep& step) const override {
    const Node& n = step.node;
    const json::object& effect = step.state.EffectObject();
    Decision d;
    d.kind = Decision::Kind::kCommit;
    if (const json::value* e = effect.if_contains("error"); e && e->is_object()) {
      FailNode(d.events, n, e->get_object());
      return d;
    }
    if (const json::value* r = effect.if_contains("response"); r && r->is_object()) {
      json::object outputs = r->get_object();
      CompleteNode(d.events, step.run_id, n, std::move(outputs));
      return d;
    }
    const json::object& request = ObjOr(effect, "request");
    if (request.empty()) {  // started by an older host without the request logged
      FailNode(d.events, n, ErrorObj("internal_error", "node '" + n.id + "': no request logged"));
      return d;
    }
    d.kind = Decision::Kind::kEffect;
    d.effect = request;
    return d;
  }
};

}  // namespace

std::unique_ptr<const NodeKind> MakeHttpCallKind() { return std::make_unique<HttpCall>(); }

}  // namespace a2ad::workflow::nodes

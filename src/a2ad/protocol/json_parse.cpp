#include "a2ad/protocol/json_parse.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/protocol/json_util.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

// Builds the DOM itself (rather than through json::value_stack) so that a member name seen
// twice is noticed when it is inserted, and so that the path of the member being read is
// known when a value is refused.
class StrictBuilder {
 public:
  // Limits of the containers; the body limit of the transport is far below them.
  static constexpr std::size_t max_object_size = std::size_t(-1) / 4;
  static constexpr std::size_t max_array_size = std::size_t(-1) / 4;
  static constexpr std::size_t max_key_size = std::size_t(-1) / 4;
  static constexpr std::size_t max_string_size = std::size_t(-1) / 4;

  using error_code = boost::system::error_code;

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }

  bool on_array_begin(error_code&) {
    Open(json::array(sp_));
    return true;
  }
  bool on_array_end(std::size_t, error_code& ec) { return Close(ec); }
  bool on_object_begin(error_code&) {
    Open(json::object(sp_));
    return true;
  }
  bool on_object_end(std::size_t, error_code& ec) { return Close(ec); }

  bool on_string_part(json::string_view s, std::size_t, error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view s, std::size_t, error_code& ec) {
    if (text_.empty()) return Insert(json::string_view(s), ec);
    text_.append(s.data(), s.size());
    const bool inserted = Insert(json::string_view(text_), ec);
    text_.clear();
    return inserted;
  }
  bool on_key_part(json::string_view s, std::size_t, error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, error_code&) {
    Frame& top = frames_.back();
    if (text_.empty()) {
      top.key.assign(s.data(), s.size());
    } else {
      text_.append(s.data(), s.size());
      top.key.swap(text_);
      text_.clear();
    }
    return true;
  }

  bool on_number_part(json::string_view s, error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(int64_t i, json::string_view, error_code& ec) {
    number_.clear();
    return Insert(i, ec);
  }
  bool on_uint64(uint64_t u, json::string_view, error_code& ec) {
    number_.clear();
    return Insert(u, ec);
  }
  bool on_double(double d, json::string_view s, error_code& ec) {
    number_.append(s.data(), s.size());
    std::string literal = std::exchange(number_, {});
    // Boost 1.81 reads some 16-17 digit literals one unit in the last place off (its fast
    // path is not correctly rounded), so a value would not survive a round trip: read the
    // literal again with the correctly rounded std::from_chars. Out of its range (an
    // underflow to zero or a subnormal) Boost's reading stands.
    double exact = 0;
    const auto [end, err] = std::from_chars(literal.data(), literal.data() + literal.size(), exact);
    if (err == std::errc() && end == literal.data() + literal.size()) d = exact;
    // Decided on the whole literal: the shortened one below ends in "...".
    const bool integer = literal.find_first_of(".eE") == std::string::npos;
    if (literal.size() > 40) literal = literal.substr(0, 37) + "...";
    if (!std::isfinite(d)) {
      return Refuse("number out of range: " + literal +
                        " is beyond what a JSON number can hold (a finite IEEE 754 double, "
                        "magnitude below 1.8e308)",
                    ec) &&
             Insert(nullptr, ec);
    }
    if (integer) {
      return Refuse("integer out of range: " + literal +
                        " does not fit 64 bits (from -9223372036854775808 to "
                        "18446744073709551615); send it as a string",
                    ec) &&
             Insert(nullptr, ec);
    }
    return Insert(d, ec);
  }
  bool on_bool(bool b, error_code& ec) { return Insert(b, ec); }
  bool on_null(error_code& ec) { return Insert(nullptr, ec); }
  bool on_comment_part(json::string_view, error_code&) { return true; }
  bool on_comment(json::string_view, error_code&) { return true; }

  StrictBuilder(bool continue_after_fault, json::storage_ptr sp)
      : sp_(std::move(sp)), result_(sp_), continue_after_fault_(continue_after_fault) {}

  json::value& result() { return result_; }
  // The path of the value being read when the parser stopped (public: a lone surrogate is a
  // value fault the parser reports as a syntax error).
  std::string PathNow() const { return Path(); }
  std::optional<Error>& fault() { return fault_; }

 private:
  // An open container. Its place in its parent is not kept: while it is open its parent's
  // key is its name and its parent's size its index (NextSegment of the parent), so a path is
  // only spelled out when a value is refused.
  struct Frame {
    json::value container;
    std::string key;  // objects: the name of the member being read
  };

  // Every value of the document is made with sp_, so that the moves below (construction and
  // assignment from a value of the same resource) take the value over instead of copying it.
  void Open(json::value container) { frames_.push_back(Frame{std::move(container), {}}); }

  bool Close(error_code& ec) {
    json::value done = std::move(frames_.back().container);
    frames_.pop_back();
    return Insert(std::move(done), ec);
  }

  static std::string NextSegment(const Frame& parent) {
    if (parent.container.is_array())
      return "[" + std::to_string(parent.container.get_array().size()) + "]";
    return "." + parent.key;
  }

  // The path of the value about to be inserted into the innermost open container.
  std::string Path() const {
    std::string path;
    for (size_t i = 1; i < frames_.size(); ++i) path += NextSegment(frames_[i - 1]);
    if (!frames_.empty()) path += NextSegment(frames_.back());
    if (path.starts_with(".")) path.erase(0, 1);
    return path;
  }

  // A value that cannot be represented. Stops the parse, unless faults are only reported:
  // then the first one is kept and the value is left out (a null in its place; the first of
  // two members of the same name stays).
  bool Refuse(const std::string& what, error_code& ec) {
    if (!fault_) {
      std::string path = Path();
      fault_ = Error(ErrorCode::kInvalidParams, (path.empty() ? "" : path + ": ") + what,
                     {{"field", path}});
    }
    if (continue_after_fault_) return true;
    ec = json::error::syntax;
    return false;
  }

  // Makes the value from `arg` in its place: the next item of the innermost open array, the
  // member of the innermost open object named by its key, or the document.
  template <class Arg>
  bool Insert(Arg&& arg, error_code& ec) {
    if (frames_.empty()) {
      result_ = json::value(std::forward<Arg>(arg), sp_);
      return true;
    }
    Frame& top = frames_.back();
    if (top.container.is_array()) {
      json::array& a = top.container.get_array();
      RoomForOne(a);
      a.emplace_back(std::forward<Arg>(arg));
      return true;
    }
    json::object& o = top.container.get_object();
    RoomForOne(o);
    auto [it, inserted] = o.emplace(top.key, std::forward<Arg>(arg));
    (void)it;
    if (!inserted)
      return Refuse("duplicate member name '" + top.key + "' (each name may appear once)", ec);
    return true;
  }

  json::storage_ptr sp_;  // before result_, which is made with it
  std::vector<Frame> frames_;
  std::string text_;    // a string or key arriving in parts
  std::string number_;  // a number arriving in parts
  json::value result_;
  std::optional<Error> fault_;
  const bool continue_after_fault_;
};

// Boost.JSON reports a leading surrogate escape not followed by a trailing one as a plain
// syntax error, stopped right after the escape: "\uD800" to "\uDBFF" just before `at`.
bool AfterLeadingSurrogateEscape(std::string_view text, size_t at) {
  if (at < 6 || at > text.size() || text[at - 6] != '\\' || text[at - 5] != 'u') return false;
  const char d = text[at - 4], h = text[at - 3];
  return (d == 'd' || d == 'D') && std::string_view("89abAB").find(h) != std::string_view::npos;
}

core::Result<json::value> Parse(std::string_view text, const JsonParseOptions& options,
                                std::optional<Error>& fault, bool continue_after_fault,
                                json::storage_ptr storage = {}) {
  json::parse_options opts;
  opts.max_depth = options.max_depth;
  json::basic_parser<StrictBuilder> parser(opts, continue_after_fault, std::move(storage));
  boost::system::error_code ec;
  size_t used = parser.write_some(false, text.data(), text.size(), ec);
  // write_some stops at the end of the document: anything but whitespace after it is an
  // error (a second document, garbage).
  if (!ec && text.find_first_not_of(" \t\r\n", used) != std::string_view::npos) {
    used = text.find_first_not_of(" \t\r\n", used);
    ec = json::error::extra_data;
  }
  fault = std::move(parser.handler().fault());
  if (fault && !continue_after_fault) return std::move(*fault);
  if (ec == json::error::illegal_leading_surrogate ||
      ec == json::error::illegal_trailing_surrogate ||
      (ec == json::error::syntax && AfterLeadingSurrogateEscape(text, used))) {
    // Well-formed JSON whose string cannot be represented: a value fault naming the member,
    // like 1e999 (the parse cannot go on past it: the rest stays unread).
    const std::string path = parser.handler().PathNow();
    return Error(ErrorCode::kInvalidParams,
                 (path.empty() ? "" : path + ": ") +
                     "a \\u escape that is an unpaired UTF-16 surrogate (\\ud800-\\udfff) has no "
                     "UTF-8 spelling; send the character itself or a valid surrogate pair",
                 {{"field", path}});
  }
  if (ec) {
    std::string what = ec == json::error::too_deep
                           ? "nested deeper than " + std::to_string(options.max_depth) + " levels"
                           : ec.message();
    if (text.empty()) what = "empty body";
    return Error(ErrorCode::kParseError,
                 "Invalid JSON payload: " + what + " (at byte " + std::to_string(used) + ")");
  }
  return std::move(parser.handler().result());
}

}  // namespace

core::Result<json::value> ParseJson(std::string_view text, const JsonParseOptions& options) {
  std::optional<Error> fault;
  return Parse(text, options, fault, false);
}

core::Result<json::value> ParseJson(std::string_view text, json::storage_ptr storage,
                                    const JsonParseOptions& options) {
  std::optional<Error> fault;
  return Parse(text, options, fault, false, std::move(storage));
}

core::Result<json::value> ParseJsonReportingFaults(std::string_view text,
                                                   std::optional<core::Error>& fault,
                                                   const JsonParseOptions& options) {
  return Parse(text, options, fault, true);
}

core::Result<json::object> ParseJsonObject(std::string_view text, std::string_view what,
                                           const JsonParseOptions& options) {
  auto v = ParseJson(text, options);
  if (!v) return std::move(v).error();
  if (!v->is_object()) return FieldError(what, "expected a JSON object");
  return std::move(v->get_object());
}

}  // namespace a2ad::protocol

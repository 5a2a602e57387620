#include "providers/generation_settings.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <exception>
#include <span>
#include <type_traits>

#include "providers/splice.hpp"

namespace td::providers {
namespace {

using json::kNone;
using json::Type;

enum class Kind : std::uint8_t { String, Integer, Bool };

struct Key {
  std::string_view camel;
  std::string_view snake = {};  // Gemini's other protobuf JSON spelling; empty: one spelling
};

// One wire field: where a setting lives in one format.
struct Field {
  Setting setting;
  Kind kind;
  std::uint8_t depth;        // members from the root to the value
  std::array<Key, 3> path;
  std::string_view wire;     // the dotted path, for wire_field() and messages
  bool twin = false;         // a second spelling of the setting (chat max_tokens):
                             // written where present, never inserted
};

constexpr Key kGen{"generationConfig", "generation_config"};
constexpr Key kThink{"thinkingConfig", "thinking_config"};

// Within a format, fields are in the order new members are written.
constexpr Field kChat[] = {
    {Setting::reasoning_effort, Kind::String, 1, {Key{"reasoning_effort"}}, "reasoning_effort"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_completion_tokens"}}, "max_completion_tokens"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_tokens"}}, "max_tokens", true},
};
constexpr Field kResponses[] = {
    {Setting::reasoning_effort, Kind::String, 2, {Key{"reasoning"}, Key{"effort"}}, "reasoning.effort"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_output_tokens"}}, "max_output_tokens"},
};
constexpr Field kAnthropic[] = {
    {Setting::thinking_type, Kind::String, 2, {Key{"thinking"}, Key{"type"}}, "thinking.type"},
    {Setting::thinking_budget, Kind::Integer, 2, {Key{"thinking"}, Key{"budget_tokens"}}, "thinking.budget_tokens"},
    {Setting::reasoning_effort, Kind::String, 2, {Key{"output_config"}, Key{"effort"}}, "output_config.effort"},
    {Setting::max_output_tokens, Kind::Integer, 1, {Key{"max_tokens"}}, "max_tokens"},
};
constexpr Field kGemini[] = {
    {Setting::max_output_tokens, Kind::Integer, 2, {kGen, Key{"maxOutputTokens", "max_output_tokens"}},
     "generationConfig.maxOutputTokens"},
    {Setting::include_thoughts, Kind::Bool, 3, {kGen, kThink, Key{"includeThoughts", "include_thoughts"}},
     "generationConfig.thinkingConfig.includeThoughts"},
    {Setting::thinking_budget, Kind::Integer, 3, {kGen, kThink, Key{"thinkingBudget", "thinking_budget"}},
     "generationConfig.thinkingConfig.thinkingBudget"},
    {Setting::thinking_level, Kind::String, 3, {kGen, kThink, Key{"thinkingLevel", "thinking_level"}},
     "generationConfig.thinkingConfig.thinkingLevel"},
};

std::span<const Field> fields(Api api) {
  switch (api) {
    case Api::openai_chat: return kChat;
    case Api::openai_responses: return kResponses;
    case Api::anthropic: return kAnthropic;
    case Api::gemini: return kGemini;
  }
  return {};
}

// Calls f with the optional member of `g` that holds setting `s`.
template <class G, class F>
decltype(auto) visit(G& g, Setting s, F&& f) {
  switch (s) {
    case Setting::reasoning_effort: return f(g.reasoning_effort);
    case Setting::thinking_type: return f(g.thinking_type);
    case Setting::thinking_budget: return f(g.thinking_budget);
    case Setting::thinking_level: return f(g.thinking_level);
    case Setting::include_thoughts: return f(g.include_thoughts);
    case Setting::max_output_tokens: break;
  }
  return f(g.max_output_tokens);
}

bool has(const GenerationSettings& g, Setting s) {
  return visit(g, s, [](const auto& o) { return o.has_value(); });
}

bool same(const GenerationSettings& a, const GenerationSettings& b, Setting s) {
  return visit(a, s, [&](const auto& x) {
    return visit(b, s, [&](const auto& y) {
      if constexpr (std::is_same_v<decltype(x), decltype(y)>) return x == y;
      else return false;
    });
  });
}

void copy(GenerationSettings& to, const GenerationSettings& from, Setting s) {
  visit(to, s, [&](auto& x) {
    visit(from, s, [&](const auto& y) {
      if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::decay_t<decltype(y)>>) x = y;
    });
  });
}

// The JSON text of the (set) value of `s`.
std::string json_value(const GenerationSettings& g, Setting s) {
  return visit(g, s, [](const auto& o) -> std::string {
    using T = typename std::decay_t<decltype(o)>::value_type;
    if constexpr (std::is_same_v<T, std::string>) return json::json_string(*o);
    else if constexpr (std::is_same_v<T, bool>) return *o ? "true" : "false";
    else return std::to_string(*o);
  });
}

// A field's member in the body.
struct Found {
  enum class State : std::uint8_t { absent, value, problem } state = State::absent;
  std::uint32_t leaf = kNone;  // the member holding the value (null included)
  GenerationSettings value;    // this field alone, when state == value
  std::string problem;
};

// The member of `obj` spelled `k`: false (with *why) when it is there twice.
bool member(const json::Document& d, std::uint32_t obj, const Key& k, std::uint32_t& out, std::string& why) {
  out = kNone;
  for (std::uint32_t c = d.node(obj).first; c != kNone; c = d.node(c).next) {
    if (!d.key_is(c, k.camel) && (k.snake.empty() || !d.key_is(c, k.snake))) continue;
    if (out != kNone) {
      why = d.key(out) == d.key(c) ? "duplicated key" : "sent under both spellings";
      return false;
    }
    out = c;
  }
  return true;
}

std::string_view wire_prefix(const Field& f, std::size_t levels) {
  std::size_t end = 0;
  for (std::size_t i = 0; i < levels && end != std::string_view::npos; ++i)
    end = f.wire.find('.', end == 0 ? 0 : end + 1);
  return f.wire.substr(0, end);
}

bool parse_int(std::string_view raw, std::int64_t& v) {
  if (raw.find_first_of(".eE") != std::string_view::npos) return false;
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  return ec == std::errc{} && p == raw.data() + raw.size();
}

Found look(const json::Document& d, const Field& f) {
  Found r;
  auto problem = [&](std::size_t levels, const char* why) {
    r.state = Found::State::problem;
    r.problem = std::string(wire_prefix(f, levels)) + ": " + why;
    return r;
  };
  std::uint32_t obj = d.root();
  for (std::size_t i = 0; i < f.depth; ++i) {
    std::uint32_t m;
    std::string why;
    if (!member(d, obj, f.path[i], m, why)) return problem(i + 1, why.c_str());
    if (m == kNone) return r;
    const Type t = d.node(m).type;
    if (i + 1 < f.depth) {
      if (t == Type::Null) return r;  // a null parent: nothing set below it
      if (t != Type::Object) return problem(i + 1, "not an object");
      obj = m;
      continue;
    }
    r.leaf = m;
    if (t == Type::Null) return r;
    std::string text;
    std::int64_t number = 0;
    switch (f.kind) {
      case Kind::String:
        if (t != Type::String) return problem(i + 1, "not a string");
        text = d.str(m);
        break;
      case Kind::Integer:
        if (t != Type::Number || !parse_int(d.raw(m), number)) return problem(i + 1, "not an integer");
        break;
      case Kind::Bool:
        if (t != Type::True && t != Type::False) return problem(i + 1, "not a boolean");
        break;
    }
    visit(r.value, f.setting, [&](auto& x) {
      using T = typename std::decay_t<decltype(x)>::value_type;
      if constexpr (std::is_same_v<T, std::string>) x = std::move(text);
      else if constexpr (std::is_same_v<T, bool>) x = t == Type::True;
      else x = number;
    });
    r.state = Found::State::value;
  }
  return r;
}

SettingsRead read_doc(Api api, const json::Document& d) {
  SettingsRead out;
  if (d.nodes().empty() || d.node(d.root()).type != Type::Object) {
    out.problems.emplace_back("body is not a JSON object");
    return out;
  }
  for (const Field& f : fields(api)) {
    Found r = look(d, f);
    // Fields under one unreadable parent share its problem: reported once.
    if (r.state == Found::State::problem &&
        std::find(out.problems.begin(), out.problems.end(), r.problem) == out.problems.end())
      out.problems.push_back(std::move(r.problem));
    if (r.state == Found::State::value && !has(out.settings, f.setting)) copy(out.settings, r.value, f.setting);
  }
  return out;
}

// Values no provider takes whatever the model (model-specific limits are the
// caller's): empty strings, an output cap below 1, budgets out of range.
bool check_values(Api api, const GenerationSettings& want, std::string& err) {
  for (Setting s : kAllSettings) {
    bool empty = visit(want, s, [](const auto& o) {
      if constexpr (std::is_same_v<typename std::decay_t<decltype(o)>::value_type, std::string>)
        return o.has_value() && o->empty();
      else return false;
    });
    if (empty) err = std::string(name(s)) + " is empty";
  }
  if (want.max_output_tokens && *want.max_output_tokens < 1) err = "max_output_tokens below 1";
  if (api == Api::anthropic && want.thinking_budget && *want.thinking_budget < 1024)
    err = "thinking.budget_tokens below Anthropic's minimum of 1024";
  if (api == Api::gemini && want.thinking_budget && *want.thinking_budget < -1)
    err = "thinkingBudget below -1";
  if (api == Api::anthropic && want.thinking_type && *want.thinking_type != "enabled" &&
      *want.thinking_type != "disabled" && *want.thinking_type != "adaptive")
    err = "thinking.type must be enabled, disabled or adaptive";
  return err.empty();
}

std::size_t index_of(std::span<const Field> fs, Setting s, bool twin = false) {
  for (std::size_t i = 0; i < fs.size(); ++i)
    if (fs[i].setting == s && fs[i].twin == twin) return i;
  return fs.size();
}

// The pairing rules between fields (see the header). `drop`: the index of a
// member to remove with the write, or fs.size().
bool check_shape(Api api, std::span<const Field> fs, const std::vector<Found>& found, const GenerationSettings& now,
                 const GenerationSettings& want, std::size_t& drop, std::string& err) {
  drop = fs.size();
  auto present = [&](Setting s) { return found[index_of(fs, s)].state != Found::State::absent; };
  if (api == Api::anthropic) {
    const bool type_written = want.thinking_type && want.thinking_type != now.thinking_type;
    const auto type = want.thinking_type ? want.thinking_type : now.thinking_type;
    const std::size_t budget = index_of(fs, Setting::thinking_budget);
    if (type_written && *type != "enabled") {
      // The budget goes with the "enabled" variant; one we cannot locate stays.
      if (found[budget].state == Found::State::problem && found[budget].leaf == kNone) {
        err = found[budget].problem;
        return false;
      }
      if (found[budget].leaf != kNone) drop = budget;
    }
    if (want.thinking_budget && type != "enabled") {
      err = "thinking.budget_tokens needs thinking.type \"enabled\"";
      return false;
    }
    if (type_written && *type == "enabled" && !want.thinking_budget && !now.thinking_budget) {
      err = "thinking.type \"enabled\" needs thinking.budget_tokens";
      return false;
    }
  }
  if (api == Api::gemini && (want.thinking_level || want.thinking_budget) &&
      (want.thinking_level || present(Setting::thinking_level)) &&
      (want.thinking_budget || present(Setting::thinking_budget))) {
    err = "thinkingLevel and thinkingBudget cannot be sent together";
    return false;
  }
  return true;
}

// A member to add: a value, or (value empty) an object of members.
struct NewMember {
  std::string key;
  std::string value;
  std::vector<NewMember> kids;
};

// Protobuf JSON accepts either spelling; a new key follows its object's.
bool snake_object(const json::Document& d, std::uint32_t obj) {
  if (obj != d.root() && d.key(obj).find('_') != std::string::npos) return true;
  for (std::uint32_t c = d.node(obj).first; c != kNone; c = d.node(c).next)
    if (d.key(c).find('_') != std::string::npos) return true;
  return false;
}

// Adds levels [from, depth) of `f`, ending in `value`, to `list`, sharing
// parents already there.
void add_chain(std::vector<NewMember>& list, const Field& f, std::size_t from, const std::string& value, bool snake) {
  std::vector<NewMember>* at = &list;
  for (std::size_t i = from; i < f.depth; ++i) {
    const Key& k = f.path[i];
    std::string key(snake && !k.snake.empty() ? k.snake : k.camel);
    if (i + 1 == f.depth) {
      at->push_back(NewMember{key, value, {}});
      return;
    }
    NewMember* parent = nullptr;
    for (NewMember& m : *at)
      if (m.value.empty() && m.key == key) parent = &m;
    if (!parent) parent = &at->emplace_back(NewMember{key, {}, {}});
    at = &parent->kids;
  }
}

// `ms` joined by `sep`; objects inside on one line, with `inner` between members.
void render(std::string& out, const std::vector<NewMember>& ms, std::string_view sep, std::string_view inner,
            std::string_view colon) {
  bool first = true;
  for (const NewMember& m : ms) {
    if (!first) out += sep;
    first = false;
    json::append_json_string(out, m.key);
    out += colon;
    if (!m.value.empty()) {
      out += m.value;
    } else {
      out += '{';
      render(out, m.kids, inner, inner, colon);
      out += '}';
    }
  }
}

// The separator between two members of `obj`, in the body's style: the one
// it has between its members, or after its '{' (pretty printing), or the
// root's when that is on one line (", " from Python's json.dumps).
std::string separator(const json::Document& d, std::uint32_t obj) {
  auto between = [&](std::uint32_t o) {
    const std::uint32_t a = d.node(o).first, b = d.node(a).next;
    return d.text().substr(d.node(a).end, d.node(b).key_begin - d.node(a).end);
  };
  const json::Node& o = d.node(obj);
  if (o.count >= 2) return std::string(between(obj));
  if (o.count == 1 && d.node(o.first).key_begin > o.begin + 1)
    return "," + std::string(d.text().substr(o.begin + 1, d.node(o.first).key_begin - o.begin - 1));
  if (d.node(d.root()).count >= 2 && between(d.root()).find('\n') == std::string_view::npos)
    return std::string(between(d.root()));
  return ",";
}
// What follows a key in `obj` (": " or ":").
std::string_view colon_of(const json::Document& d, std::uint32_t obj) {
  const json::Node& o = d.node(obj);
  if (o.count == 0) return d.node(d.root()).count > 0 ? colon_of(d, d.root()) : ":";
  const json::Node& m = d.node(o.first);
  return d.text().substr(m.key_end, m.begin - m.key_end);
}
// A new nested object is written on one line.
std::string inline_separator(std::string sep) { return sep.find('\n') == std::string::npos ? sep : ","; }

// Collects the edits that put the values into the body.
class Placer {
 public:
  explicit Placer(const json::Document& d) : d_(d) {}

  void set(const Field& f, const std::string& value) {
    std::uint32_t obj = d_.root();
    for (std::size_t i = 0; i < f.depth; ++i) {
      std::uint32_t m;
      std::string why;
      member(d_, obj, f.path[i], m, why);  // look() found no duplicates on this path
      if (m == kNone) {
        add_chain(group(inserts_, obj, obj), f, i, value, snake_object(d_, obj));
        return;
      }
      if (i + 1 == f.depth) {
        edits_.push_back(splice::Edit{d_.node(m).begin, d_.node(m).end, value, {}});
        return;
      }
      if (d_.node(m).type == Type::Null) {  // becomes an object
        add_chain(group(fills_, m, obj), f, i + 1, value, d_.key(m).find('_') != std::string::npos);
        return;
      }
      obj = m;
    }
  }

  // Removes member `m` (a leaf of `f`) from its object.
  void remove(const Field& f, std::uint32_t m) {
    std::uint32_t obj = d_.root();
    for (std::size_t i = 0; i + 1 < f.depth; ++i) {
      std::uint32_t parent;
      std::string why;
      member(d_, obj, f.path[i], parent, why);
      obj = parent;
    }
    edits_.push_back(splice::cut_member(d_, obj, m));
    removed_.push_back(m);
  }

  std::vector<splice::Edit> edits() {
    for (const Group& g : inserts_) {
      // After the last member that stays; first in an object left empty.
      std::uint32_t last = kNone;
      for (std::uint32_t c = d_.node(g.node).first; c != kNone; c = d_.node(c).next)
        if (std::find(removed_.begin(), removed_.end(), c) == removed_.end()) last = c;
      const std::string sep = separator(d_, g.node);
      splice::Edit e;
      e.begin = e.end = last == kNone ? d_.node(g.node).begin + 1 : d_.node(last).end;
      if (last != kNone) e.text = sep;
      render(e.text, g.members, sep, inline_separator(sep), colon_of(d_, g.node));
      edits_.push_back(std::move(e));
    }
    for (const Group& g : fills_) {
      const std::string sep = inline_separator(separator(d_, g.parent));
      splice::Edit e{d_.node(g.node).begin, d_.node(g.node).end, "{", {}};
      render(e.text, g.members, sep, sep, colon_of(d_, g.parent));
      e.text += '}';
      edits_.push_back(std::move(e));
    }
    return std::move(edits_);
  }

 private:
  struct Group {
    std::uint32_t node;    // the object to add to, or the null to replace
    std::uint32_t parent;  // the object holding it (its spacing is copied)
    std::vector<NewMember> members;
  };
  static std::vector<NewMember>& group(std::vector<Group>& gs, std::uint32_t node, std::uint32_t parent) {
    for (Group& g : gs)
      if (g.node == node) return g.members;
    return gs.push_back(Group{node, parent, {}}), gs.back().members;
  }

  const json::Document& d_;
  std::vector<Group> inserts_;  // members to add to existing objects
  std::vector<Group> fills_;    // null values that become objects
  std::vector<splice::Edit> edits_;
  std::vector<std::uint32_t> removed_;
};

SettingsWrite write_doc(Api api, const json::Document& d, const GenerationSettings& want) {
  SettingsWrite out;
  if (d.nodes().empty() || d.node(d.root()).type != Type::Object) {
    out.error = "body is not a JSON object";
    return out;
  }
  const std::span<const Field> fs = fields(api);
  for (Setting s : kAllSettings) {
    if (has(want, s) && index_of(fs, s) == fs.size()) {
      out.error = std::string(name(api)) + " has no " + std::string(name(s));
      return out;
    }
  }
  if (!check_values(api, want, out.error)) return out;
  std::vector<Found> found;
  GenerationSettings now;
  for (const Field& f : fs) {
    found.push_back(look(d, f));
    if (found.back().state == Found::State::value && !has(now, f.setting)) copy(now, found.back().value, f.setting);
  }
  std::size_t drop;
  if (!check_shape(api, fs, found, now, want, drop, out.error)) return out;

  Placer place(d);
  bool any = false;
  for (std::size_t i = 0; i < fs.size(); ++i) {
    const Field& f = fs[i];
    if (!has(want, f.setting)) continue;
    // A twin is written where the body has it; the main field too, unless
    // only the twin is there.
    auto there = [&](std::size_t k) { return k < fs.size() && found[k].state != Found::State::absent; };
    const std::size_t twin = index_of(fs, f.setting, true);
    if (f.twin ? !there(i) : (twin != fs.size() && there(twin) && !there(i))) continue;
    if (found[i].state == Found::State::problem) {
      out.error = found[i].problem;
      return out;
    }
    if (found[i].state == Found::State::value && same(found[i].value, want, f.setting)) continue;
    place.set(f, json_value(want, f.setting));
    any = true;
  }
  if (drop != fs.size()) {
    place.remove(fs[drop], found[drop].leaf);
    any = true;
  }
  out.ok = true;
  if (!any) return out;
  if (!splice::apply(d.text(), place.edits(), out.body)) {
    out = SettingsWrite{};
    out.error = "overlapping edits";
    return out;
  }
  out.changed = out.body != d.text();
  return out;
}

}  // namespace

std::string_view name(Setting s) {
  switch (s) {
    case Setting::reasoning_effort: return "reasoning_effort";
    case Setting::thinking_type: return "thinking_type";
    case Setting::thinking_budget: return "thinking_budget";
    case Setting::thinking_level: return "thinking_level";
    case Setting::include_thoughts: return "include_thoughts";
    case Setting::max_output_tokens: return "max_output_tokens";
  }
  return "?";
}

std::string_view wire_field(Api api, Setting s) {
  const auto fs = fields(api);
  const std::size_t i = index_of(fs, s);
  return i < fs.size() ? fs[i].wire : std::string_view{};
}

SettingsRead read_generation_settings(Api api, std::string_view body) {
  try {
    json::Document d;
    std::string err;
    if (!d.parse(body, &err)) return SettingsRead{{}, {"body does not parse: " + err}};
    return read_doc(api, d);
  } catch (const std::exception& e) {
    return SettingsRead{{}, {std::string("read failed: ") + e.what()}};
  }
}

SettingsRead read_generation_settings(const ParsedRequest& request) {
  try {
    return read_doc(request.format, request.doc);
  } catch (const std::exception& e) {
    return SettingsRead{{}, {std::string("read failed: ") + e.what()}};
  }
}

SettingsWrite write_generation_settings(Api api, std::string_view body, const GenerationSettings& want) {
  try {
    if (want == GenerationSettings{}) return SettingsWrite{true, false, {}, {}};
    json::Document d;
    SettingsWrite out;
    if (!d.parse(body, &out.error)) {
      out.error = "body does not parse: " + out.error;
      return out;
    }
    return write_doc(api, d, want);
  } catch (const std::exception& e) {
    return SettingsWrite{false, false, {}, std::string("write failed: ") + e.what()};
  }
}

SettingsWrite write_generation_settings(const ParsedRequest& request, const GenerationSettings& want) {
  try {
    return write_doc(request.format, request.doc, want);
  } catch (const std::exception& e) {
    return SettingsWrite{false, false, {}, std::string("write failed: ") + e.what()};
  }
}

}  // namespace td::providers

#include "providers/generation_settings.hpp"

#include <algorithm>
#include <exception>
#include <span>
#include <type_traits>

#include "providers/format_adapter.hpp"
#include "providers/generation_settings_fields.hpp"
#include "providers/part_splice.hpp"

namespace td::providers {
namespace {

using generation::copy;
using generation::Field;
using generation::Found;
using generation::has;
using generation::index_of;
using generation::json_value;
using generation::Key;
using generation::look;
using generation::member;
using generation::same;
using generation::visit;
using json::kNone;
using json::Type;

SettingsRead read_doc(Api api, const json::Document& d) {
  SettingsRead out;
  if (d.nodes().empty() || d.node(d.root()).type != Type::Object) {
    out.problems.emplace_back("body is not a JSON object");
    return out;
  }
  for (const Field& f : adapter(api).settings) {
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
      else
        return false;
    });
    if (empty) err = std::string(name(s)) + " is empty";
  }
  if (want.max_output_tokens && *want.max_output_tokens < 1) err = "max_output_tokens below 1";
  if (const auto format_rule = adapter(api).settings_values) format_rule(want, err);
  return err.empty();
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
        edits_.push_back(json::Edit{d_.node(m).begin, d_.node(m).end, value, {}});
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
    edits_.push_back(json::cut_member(d_, obj, m));
    removed_.push_back(m);
  }

  std::vector<json::Edit> edits() {
    for (const Group& g : inserts_) {
      // After the last member that stays; first in an object left empty.
      std::uint32_t last = kNone;
      for (std::uint32_t c = d_.node(g.node).first; c != kNone; c = d_.node(c).next)
        if (std::find(removed_.begin(), removed_.end(), c) == removed_.end()) last = c;
      const std::string sep = separator(d_, g.node);
      json::Edit e;
      e.begin = e.end = last == kNone ? d_.node(g.node).begin + 1 : d_.node(last).end;
      if (last != kNone) e.text = sep;
      render(e.text, g.members, sep, inline_separator(sep), colon_of(d_, g.node));
      edits_.push_back(std::move(e));
    }
    for (const Group& g : fills_) {
      const std::string sep = inline_separator(separator(d_, g.parent));
      json::Edit e{d_.node(g.node).begin, d_.node(g.node).end, "{", {}};
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
  std::vector<json::Edit> edits_;
  std::vector<std::uint32_t> removed_;
};

SettingsEdits edits_doc(Api api, const json::Document& d, const GenerationSettings& want) {
  SettingsEdits out;
  if (d.nodes().empty() || d.node(d.root()).type != Type::Object) {
    out.error = "body is not a JSON object";
    return out;
  }
  const FormatAdapter& format = adapter(api);
  const std::span<const Field> fs = format.settings;
  for (Setting s : kAllSettings) {
    if (has(want, s) && index_of(fs, s) == fs.size()) {
      out.error = std::string(name(api)) + " has no " + std::string(name(s));
      return out;
    }
  }
  std::vector<Found> found;
  GenerationSettings now;
  for (const Field& f : fs) {
    found.push_back(look(d, f));
    if (found.back().state == Found::State::value && !has(now, f.setting)) copy(now, found.back().value, f.setting);
  }
  // What changes: a field already at the wanted value is left out, so a body
  // that already says what we want is neither refused nor rewritten.
  std::vector<std::size_t> targets;
  GenerationSettings delta;
  for (std::size_t i = 0; i < fs.size(); ++i) {
    const Field& f = fs[i];
    if (!has(want, f.setting)) continue;
    // A twin is written where the body has it; the main field too, unless
    // only the twin is there.
    auto there = [&](std::size_t k) { return k < fs.size() && found[k].state != Found::State::absent; };
    const std::size_t twin = index_of(fs, f.setting, true);
    if (f.twin ? !there(i) : (twin != fs.size() && there(twin) && !there(i))) continue;
    if (found[i].state == Found::State::value && same(found[i].value, want, f.setting)) continue;
    targets.push_back(i);
    copy(delta, want, f.setting);
  }
  std::size_t drop = fs.size();
  if (!targets.empty() && (!check_values(api, delta, out.error) ||
                           (format.settings_shape && !format.settings_shape(fs, found, now, delta, drop, out.error))))
    return out;
  Placer place(d);
  for (std::size_t i : targets) {
    if (found[i].state == Found::State::problem) {
      out.error = found[i].problem;
      return out;
    }
    place.set(fs[i], json_value(want, fs[i].setting));
  }
  if (drop != fs.size()) place.remove(fs[drop], found[drop].leaf);
  out.ok = true;
  if (!targets.empty()) out.edits = place.edits();
  return out;
}

SettingsWrite write_doc(Api api, const json::Document& d, const GenerationSettings& want) {
  SettingsEdits e = edits_doc(api, d, want);
  SettingsWrite out{e.ok, false, {}, std::move(e.error)};
  if (!out.ok || e.edits.empty()) return out;
  if (!json::apply(d.text(), std::move(e.edits), out.body)) {
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
    case Setting::reasoning_effort:
      return "reasoning_effort";
    case Setting::thinking_type:
      return "thinking_type";
    case Setting::thinking_budget:
      return "thinking_budget";
    case Setting::thinking_level:
      return "thinking_level";
    case Setting::include_thoughts:
      return "include_thoughts";
    case Setting::max_output_tokens:
      return "max_output_tokens";
  }
  return "?";
}

std::string_view wire_field(Api api, Setting s) {
  const auto fs = adapter(api).settings;
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

SettingsEdits generation_settings_edits(const ParsedRequest& request, const GenerationSettings& want) {
  try {
    if (want == GenerationSettings{}) return SettingsEdits{true, {}, {}};
    return edits_doc(request.format, request.doc, want);
  } catch (const std::exception& e) {
    return SettingsEdits{false, {}, std::string("write failed: ") + e.what()};
  }
}

SettingsWrite write_generation_settings(const ParsedRequest& request, const GenerationSettings& want) {
  try {
    return write_doc(request.format, request.doc, want);
  } catch (const std::exception& e) {
    return SettingsWrite{false, false, {}, std::string("write failed: ") + e.what()};
  }
}

bool limits_count_output(Api api) { return adapter(api).limits_count_output; }

std::uint64_t reserved_output_tokens(const ParsedRequest& request) {
  if (!limits_count_output(request.format)) return 0;
  const auto cap = read_generation_settings(request).settings.max_output_tokens;
  return cap && *cap > 0 ? std::uint64_t(*cap) : 0;
}

}  // namespace td::providers

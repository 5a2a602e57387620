#include "providers/generation_settings_fields.hpp"

#include <charconv>
#include <type_traits>

namespace td::providers::generation {
namespace {

using json::Type;

// The first `levels` members of the field's dotted path ("thinking" of "thinking.type").
std::string_view wire_prefix(const Field& f, std::size_t levels) {
  std::size_t end = 0;
  for (std::size_t i = 0; i < levels && end != std::string_view::npos; ++i)
    end = f.wire.find('.', end == 0 ? 0 : end + 1);
  return f.wire.substr(0, end);
}

// A plain JSON integer within int64 (a fraction or exponent stops the parse short).
bool parse_int(std::string_view raw, std::int64_t& v) {
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  return ec == std::errc{} && p == raw.data() + raw.size();
}

}  // namespace

std::size_t index_of(std::span<const Field> fs, Setting s, bool twin) {
  for (std::size_t i = 0; i < fs.size(); ++i)
    if (fs[i].setting == s && fs[i].twin == twin) return i;
  return fs.size();
}

bool has(const GenerationSettings& g, Setting s) {
  return visit(g, s, [](const auto& o) { return o.has_value(); });
}

bool same(const GenerationSettings& a, const GenerationSettings& b, Setting s) {
  return visit(a, s, [&](const auto& x) {
    return visit(b, s, [&](const auto& y) {
      if constexpr (std::is_same_v<decltype(x), decltype(y)>)
        return x == y;
      else
        return false;
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

std::string json_value(const GenerationSettings& g, Setting s) {
  return visit(g, s, [](const auto& o) -> std::string {
    using T = typename std::decay_t<decltype(o)>::value_type;
    if constexpr (std::is_same_v<T, std::string>)
      return json::json_string(*o);
    else if constexpr (std::is_same_v<T, bool>)
      return *o ? "true" : "false";
    else
      return std::to_string(*o);
  });
}

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
      if constexpr (std::is_same_v<T, std::string>)
        x = std::move(text);
      else if constexpr (std::is_same_v<T, bool>)
        x = t == Type::True;
      else
        x = number;
    });
    r.state = Found::State::value;
  }
  return r;
}

}  // namespace td::providers::generation

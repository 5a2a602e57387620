#include "pruning/strategies/stale_assistant_text.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "pruning/json_nesting.hpp"
#include "pruning/memo.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/common.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

SnipOptions snip_options(const StaleAssistantTextOptions& p) {
  SnipOptions o{p.stale_assistant_text_head_bytes, p.stale_assistant_text_tail_bytes, 0, p.stale_assistant_text_names};
  o.recall = p.recall;
  return o;
}

// A string as it appears inside a JSON string literal (no quotes).
std::string json_inside(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(buf.GetString() + 1, buf.GetSize() - 2);
}

// Replaces every long string value by a placeholder "\u0001<k>\u0001" and
// collects the snips of the originals.
void take_long_strings(rapidjson::Value& v, rapidjson::Document::AllocatorType& alloc,
                       const StaleAssistantTextOptions& p, const SnipOptions& options, std::vector<Snipped>& snips) {
  if (v.IsString()) {
    if (v.GetStringLength() < p.stale_assistant_text_threshold_bytes) return;
    Snipped s = snip({v.GetString(), v.GetStringLength()}, options);
    if (!s.cut) return;
    // Its notices name the string's handle: the string is what recall answers.
    if (options.recall) s.named.push_back(std::make_shared<const std::string>(v.GetString(), v.GetStringLength()));
    std::string marker = "\x01" + std::to_string(snips.size()) + "\x01";
    snips.push_back(std::move(s));
    v.SetString(marker.data(), static_cast<rapidjson::SizeType>(marker.size()), alloc);
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray()) take_long_strings(e, alloc, p, options, snips);
  } else if (v.IsObject()) {
    for (auto& m : v.GetObject()) take_long_strings(m.value, alloc, p, options, snips);
  }
}

}  // namespace

Snipped snip_arguments_template(std::string_view args, const StaleAssistantTextOptions& opt) {
  return snip_arguments_template(args, opt, snip_options(opt));
}

Snipped snip_arguments_template(std::string_view args, const StaleAssistantTextOptions& opt,
                                const SnipOptions& options) {
  Snipped out;
  if (!json_nesting_within(args)) return out;  // the walks below recurse per level
  rapidjson::Document d;
  d.Parse<rapidjson::kParseStopWhenDoneFlag>(args.data(), args.size());
  if (d.HasParseError() || !d.IsObject()) return out;
  std::vector<Snipped> snips;
  take_long_strings(d, d.GetAllocator(), opt, options, snips);
  if (snips.empty()) return out;
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  // Splice each snip back where its placeholder was written, escaped for
  // the inside of a JSON string, its names slot included.
  std::string_view json(buf.GetString(), buf.GetSize());
  std::string pending;  // literal text before the next slot
  for (std::size_t k = 0; k < snips.size(); ++k) {
    for (auto& t : snips[k].named) out.named.push_back(std::move(t));
    const std::string marker = "\\u0001" + std::to_string(k) + "\\u0001";
    std::size_t at = json.find(marker);
    if (at == std::string_view::npos) return Snipped{};  // cannot happen; stay safe
    pending += json.substr(0, at);
    json.remove_prefix(at + marker.size());
    for (auto& piece : snips[k].pieces) {
      pending += json_inside(piece.text);
      if (!piece.slot) continue;
      out.pieces.push_back(Snipped::Piece{std::move(pending), true, std::move(piece.names)});
      pending.clear();
    }
  }
  pending += json;
  out.pieces.push_back(Snipped::Piece{std::move(pending), false, {}});
  out.cut = true;
  return out;
}

std::string snip_arguments(std::string_view args, const StaleAssistantTextOptions& opt) {
  Snipped s = snip_arguments_template(args, opt);
  if (!s.cut) return std::string{args};
  std::string out = render(s, opt.stale_assistant_text_names, nullptr, nullptr, true);
  return out.size() < args.size() ? out : std::string{args};
}

StrategyStats stale_assistant_text(Conversation& conv, const StaleAssistantTextOptions& opt, std::uint32_t limit,
                                   Memo<Snipped>* snips, const CopiedLines& copied, Memo<std::string>* decoded) {
  StrategyStats st{.name = "stale_assistant_text"};
  if (!opt.stale_assistant_text || (!opt.stale_assistant_text_prose && !opt.stale_assistant_text_tool_arguments))
    return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());
  if (limit == 0) return st;  // nothing stale: the common case on short requests
  SnipOptions options = snip_options(opt);
  options.keep_line_min_bytes = copied.min_bytes();
  const std::uint64_t text_salt = memo_salt(
      "snip", {options.head_bytes, options.tail_bytes, options.max_error_lines, options.max_names > 0, opt.recall});
  const std::uint64_t args_salt =
      memo_salt("snip_arguments", {options.head_bytes, options.tail_bytes, options.max_names > 0,
                                   opt.stale_assistant_text_threshold_bytes, opt.recall});
  const std::uint64_t decoded_salt = memo_salt("line_text", {});
  NameSet listed;                                     // names listed by earlier messages are not listed again
  std::vector<std::shared_ptr<const Snipped>> alive;  // what `listed` points into
  SnipOptions part_options = options;                 // with the part's copied lines
  auto snip_of = [&](std::string_view t) -> std::optional<Snipped> {
    Snipped s = snip(t, part_options);
    if (!s.cut) return std::nullopt;
    return s;
  };
  auto args_of = [&](std::string_view t) -> std::optional<Snipped> {
    Snipped s = snip_arguments_template(t, opt, part_options);
    if (!s.cut) return std::nullopt;
    return s;
  };
  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    if (m.role != Role::Assistant || m.removed) continue;
    for (Part& p : m.parts) {
      if (!p.editable || p.text.size() < opt.stale_assistant_text_threshold_bytes) continue;
      const bool text = p.kind == PartKind::Text && opt.stale_assistant_text_prose;
      const bool json = p.kind == PartKind::ToolCall && opt.stale_assistant_text_tool_arguments &&
                        !detail::excluded_tool(opt.exclude_tools, p.name);
      if (!text && !json) continue;
      // The lines it copies are kept: the memo's key names them.
      std::vector<std::uint64_t> keys;
      if (copied.keeps_any(i)) {
        std::shared_ptr<const std::string> args;  // a call's lines are those of its decoded arguments
        if (json)
          args = memoized(decoded, decoded_salt, p,
                          [&](std::string_view) -> std::optional<std::string> { return line_text(p); });
        keys = copied.kept_by(args ? std::string_view(*args) : std::string_view(p.text), i);
      }
      part_options.keep_lines = keys.empty() ? nullptr : &keys;
      std::uint64_t salt = json ? args_salt : text_salt;
      if (!keys.empty())
        salt = memo_salt("copied_lines", {salt, tok::hash_bytes(keys.data(), keys.size() * sizeof keys[0])});
      std::shared_ptr<const Snipped> snipped =
          json ? memoized(snips, salt, p, args_of) : memoized(snips, salt, p, snip_of);
      if (!snipped) continue;
      std::vector<std::string_view> used;
      std::string cut = render(*snipped, options.max_names, &listed, &used, json);
      if (!saves_enough(p.text.size(), cut.size(), opt.stale_assistant_text_min_saving_bytes)) continue;
      listed.insert(used.begin(), used.end());
      alive.push_back(std::move(snipped));
      st.add(i, p.text.size(), cut.size());
      if (json) {  // the notices name the long strings, not the arguments
        const Snipped& s = *alive.back();
        p.hidden.insert(p.hidden.end(), s.named.begin(), s.named.end());
        set_text(m, p, std::move(cut));
      } else {
        cut_text(m, p, std::move(cut), opt.recall);
      }
    }
  }
  return st;
}

}  // namespace td::pruning

#include "providers/request.hpp"

#include <algorithm>
#include <deque>
#include <exception>
#include <iterator>

#include "providers/format_adapter.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/part_splice.hpp"

namespace td::providers {

using pruning::kNewOrigin;
using pruning::Message;
using pruning::Part;

namespace detail {

Part& add_part(ParsedRequest& r, Message& m, pruning::PartKind kind, std::uint32_t elem, Field field, TextSlot slot) {
  MessageSource& ms = r.messages[m.origin];
  Part& p = m.parts.emplace_back();
  p.kind = kind;
  p.origin = ms.part_count++;
  p.editable = slot.kind != TextSlot::Kind::None;
  r.parts.push_back(PartSource{elem, field, slot});
  return p;
}

void fill_overhead(ParsedRequest& r, const std::vector<std::uint32_t>& tool_nodes) {
  std::uint64_t inside = 0;
  if (r.array != json::kNone) inside += r.doc.raw(r.array).size();
  if (r.system != json::kNone) inside += r.doc.raw(r.system).size();
  r.conversation.fixed_overhead_bytes = r.doc.text().size() - inside;
  for (std::uint32_t n : tool_nodes) {
    if (!r.conversation.fixed_overhead_text.empty()) r.conversation.fixed_overhead_text += '\n';
    r.conversation.fixed_overhead_text += r.doc.raw(n);
  }
}

int child_pos(const json::Document& d, std::uint32_t container, std::uint32_t node) {
  int k = 0;
  for (std::uint32_t c = d.node(container).first; c != json::kNone; c = d.node(c).next, ++k)
    if (c == node) return k;
  return -1;
}

bool render_in_place(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out,
                     std::string& err) {
  std::vector<json::Edit> edits;
  if (!splice::part_edits(r, m, edits, err)) return false;
  std::stable_sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  const json::Node& n = r.doc.node(r.messages[m.origin].node);
  json::append_with_edits(out, body, n.begin, n.end, edits);
  return true;
}

}  // namespace detail

ParseOutcome parse(Api format, std::string_view body, ParsedMessageMemo* memo) {
  ParseOutcome out;
  try {
    ParsedRequest r;
    r.format = format;
    r.memo = memo;
    // Resent message elements are spliced in from the memo, not parsed.
    KnownMessages known(r);
    if (!r.doc.parse(body, &out.error, 512, memo ? adapter(format).request.array_key : "", memo ? &known : nullptr))
      return out;
    if (r.doc.node(r.doc.root()).type != json::Type::Object) {
      out.error = "body is not a JSON object";
      return out;
    }
    if (!adapter(format).request.parse(r, out.error)) return out;
    r.conversation.model = r.model;
    out.request = std::move(r);
  } catch (const std::exception& e) {
    out.request.reset();
    out.error = std::string("parse failed: ") + e.what();
  }
  return out;
}

namespace {

struct Plan {
  std::vector<const Message*> system;  // non-removed system_field messages, in order
  std::vector<const Message*> array;   // non-removed array messages, in order
  bool system_untouched = true;
  bool array_untouched = true;
  bool array_in_place = true;  // same sequence, only part edits
};

bool make_plan(const ParsedRequest& r, Plan& plan, std::string& err) {
  const auto& msgs = r.conversation.messages;
  std::vector<std::uint32_t> orig_array, orig_system;
  for (std::uint32_t i = 0; i < r.messages.size(); ++i)
    (r.messages[i].system_field ? orig_system : orig_array).push_back(i);
  std::vector<bool> seen(r.messages.size(), false);
  for (const Message& m : msgs) {
    bool system_field = m.system_field && *adapter(r.format).request.system_key;
    if (m.origin != kNewOrigin) {
      if (m.origin >= r.messages.size()) {
        err = "message origin out of range";
        return false;
      }
      if (seen[m.origin]) {
        err = "message appears twice";
        return false;
      }
      seen[m.origin] = true;
      system_field = r.messages[m.origin].system_field;
      const MessageSource& ms = r.messages[m.origin];
      for (const Part& p : m.parts) {
        if (p.origin != kNewOrigin && p.origin >= ms.part_count) {
          err = "part origin out of range";
          return false;
        }
        if (p.edited && !p.editable) {
          err = "edited a part marked not editable";
          return false;
        }
      }
    } else {
      for (const Part& p : m.parts)
        if (p.origin != kNewOrigin) {
          err = "a new message holds an original part";
          return false;
        }
    }
    if (m.removed) continue;
    (system_field ? plan.system : plan.array).push_back(&m);
  }
  auto untouched = [&](const std::vector<const Message*>& now, const std::vector<std::uint32_t>& orig) {
    if (now.size() != orig.size()) return false;
    for (std::size_t i = 0; i < now.size(); ++i)
      if (now[i]->origin != orig[i] || now[i]->changed) return false;
    return true;
  };
  plan.system_untouched = untouched(plan.system, orig_system);
  plan.array_untouched = untouched(plan.array, orig_array);
  if (plan.array.size() != orig_array.size()) {
    plan.array_in_place = false;
  } else {
    for (std::size_t i = 0; i < plan.array.size(); ++i) {
      const Message& m = *plan.array[i];
      if (m.origin != orig_array[i] || (m.changed && !splice::same_structure(r, m))) {
        plan.array_in_place = false;
        break;
      }
    }
  }
  // An edited part in a message not flagged changed is still an edit.
  for (const Message* m : plan.array)
    for (const Part& p : m->parts)
      if (p.edited) plan.array_untouched = false;
  for (const Message* m : plan.system)
    for (const Part& p : m->parts)
      if (p.edited) plan.system_untouched = false;
  return true;
}

bool write_system(const ParsedRequest& r, std::string_view body, const Plan& plan, std::vector<json::Edit>& edits,
                  std::string& err) {
  const detail::FormatOps& fmt = adapter(r.format).request;
  if (plan.system.empty()) {
    if (r.system == json::kNone) return true;
    edits.push_back(json::cut_member(r.doc, r.doc.root(), r.system));
    return true;
  }
  if (plan.system.size() == 1 && plan.system[0]->origin != kNewOrigin && splice::same_structure(r, *plan.system[0]))
    return splice::part_edits(r, *plan.system[0], edits, err);
  json::Edit e;
  if (!fmt.render_system(r, body, plan.system, e.text, err)) return false;
  if (r.system != json::kNone) {
    e.begin = r.doc.node(r.system).begin;
    e.end = r.doc.node(r.system).end;
  } else {
    // A system field the client did not send: added just before the messages.
    const json::Node& anchor = r.doc.node(r.array);
    e.begin = e.end = anchor.key_begin;
    e.text = std::string("\"") + fmt.system_key + "\":" + e.text + ",";
  }
  edits.push_back(std::move(e));
  return true;
}

bool write_array(const ParsedRequest& r, std::string_view body, const Plan& plan, std::vector<json::Edit>& edits,
                 std::deque<std::string>& store, std::string& err) {
  const detail::FormatOps& fmt = adapter(r.format).request;
  if (plan.array_in_place) {
    for (const Message* m : plan.array)
      if (!splice::part_edits(r, *m, edits, err)) return false;
    return true;
  }
  // Map message origins to their position among the array's children.
  std::vector<int> pos_of(r.messages.size(), -1);
  {
    const auto kids = json::children(r.doc, r.array);
    std::size_t k = 0;
    for (std::uint32_t i = 0; i < r.messages.size() && k < kids.size(); ++i) {
      if (r.messages[i].system_field) continue;
      while (k < kids.size() && kids[k] != r.messages[i].node) ++k;
      if (k < kids.size()) pos_of[i] = static_cast<int>(k);
    }
  }
  std::vector<json::Item> items;
  items.reserve(plan.array.size());
  for (const Message* m : plan.array) {
    json::Item it;
    if (m->origin == kNewOrigin) {
      if (!fmt.render_new(r, *m, it.bytes, err)) return false;
    } else {
      it.pos = pos_of[m->origin];
      bool touched = m->changed;
      for (const Part& p : m->parts)
        touched = touched || p.edited || (adapter(r.format).cache_anchors_free && p.cache_anchor);
      if (!touched && it.pos >= 0) {
        it.ref = r.doc.raw(r.messages[m->origin].node);
      } else if (!fmt.render_changed(r, body, *m, it.bytes, err)) {
        return false;
      }
    }
    items.push_back(std::move(it));
  }
  json::Edit e;
  e.begin = r.doc.node(r.array).begin;
  e.end = r.doc.node(r.array).end;
  json::rebuild(r.doc, r.array, items, e.pieces, store);
  edits.push_back(std::move(e));
  return true;
}

}  // namespace

std::uint32_t cache_anchors_free(const ParsedRequest& r) {
  const auto rule = adapter(r.format).cache_anchors_free;
  return rule ? rule(r.doc.text()) : 0;
}

WriteOutcome write(const ParsedRequest& r, std::string_view original) { return write(r, original, {}); }

WriteOutcome write(const ParsedRequest& r, std::string_view original, std::vector<json::Edit> extra) {
  WriteOutcome out;
  try {
    if (original.size() != r.doc.text().size()) {
      out.error = "body differs from the parsed one";
      return out;
    }
    Plan plan;
    if (!make_plan(r, plan, out.error)) return out;
    if (plan.system_untouched && plan.array_untouched && extra.empty()) {
      out.ok = true;
      return out;
    }
    std::vector<json::Edit> edits;
    std::deque<std::string> store;  // bytes the edits' pieces point into
    if (!plan.system_untouched && !write_system(r, original, plan, edits, out.error)) return out;
    if (!plan.array_untouched && !write_array(r, original, plan, edits, store, out.error)) return out;
    // After the messages' edits: where one ends where an extra begins, the
    // message's bytes come first (apply() sorts stably).
    edits.insert(edits.end(), std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()));
    if (!json::apply(original, std::move(edits), out.body)) {
      out.error = "overlapping edits";
      out.body.clear();
      return out;
    }
    out.ok = true;
    out.changed = out.body != original;
  } catch (const std::exception& e) {
    out = WriteOutcome{};
    out.error = std::string("write failed: ") + e.what();
  }
  return out;
}

}  // namespace td::providers

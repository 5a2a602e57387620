#include "providers/splice.hpp"

#include <algorithm>

namespace td::providers::splice {

using pruning::kNewOrigin;
using pruning::Message;
using pruning::Part;

bool slot_edit(const TextSlot& slot, const Part& p, Edit& out, std::string& err) {
  out.begin = slot.begin;
  out.end = slot.end;
  out.text.clear();
  switch (slot.kind) {
    case TextSlot::Kind::None:
      err = "edited a part that cannot be re-rendered";
      return false;
    case TextSlot::Kind::String:
      json::append_json_string(out.text, p.text);
      return true;
    case TextSlot::Kind::JsonObject: {
      // Anthropic tool_use input and Gemini functionCall args are objects, not
      // strings: the edited text must still be one.
      json::Document d;
      if (!d.parse(p.text) || d.node(d.root()).type != json::Type::Object) {
        err = "edited tool arguments are not a JSON object";
        return false;
      }
      out.text = p.text;
      return true;
    }
    case TextSlot::Kind::WrapOutput:
      out.text = "{\"output\":";
      json::append_json_string(out.text, p.text);
      out.text.push_back('}');
      return true;
    case TextSlot::Kind::Insert:
      if (!slot.object_empty) out.text.push_back(',');
      out.text.push_back('"');
      out.text += slot.key;
      out.text += "\":";
      json::append_json_string(out.text, p.text);
      return true;
  }
  err = "bad slot";
  return false;
}

void append_with_edits(std::string& out, std::string_view body, std::uint32_t begin, std::uint32_t end,
                       const std::vector<Edit>& edits) {
  std::uint32_t at = begin;
  for (const Edit& e : edits) {
    out.append(body.data() + at, e.begin - at);
    if (e.pieces.empty()) {
      out += e.text;
    } else {
      for (std::string_view piece : e.pieces) out += piece;
    }
    at = e.end;
  }
  out.append(body.data() + at, end - at);
}

bool apply(std::string_view body, std::vector<Edit> edits, std::string& out) {
  std::stable_sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
  std::size_t grow = 0;
  for (std::size_t i = 0; i < edits.size(); ++i) {
    if (edits[i].end < edits[i].begin || edits[i].end > body.size()) return false;
    if (i > 0 && edits[i].begin < edits[i - 1].end) return false;
    grow += edits[i].text.size();
    for (std::string_view piece : edits[i].pieces) grow += piece.size();
  }
  out.clear();
  out.reserve(body.size() + grow);
  append_with_edits(out, body, 0, static_cast<std::uint32_t>(body.size()), edits);
  return true;
}

const PartSource* source_of(const ParsedRequest& r, const Message& m, const Part& p) {
  if (m.origin == kNewOrigin || p.origin == kNewOrigin) return nullptr;
  const MessageSource& ms = r.messages[m.origin];
  if (p.origin >= ms.part_count) return nullptr;
  return &r.parts[ms.first_part + p.origin];
}

bool same_structure(const ParsedRequest& r, const Message& m) {
  if (m.origin == kNewOrigin) return false;
  const MessageSource& ms = r.messages[m.origin];
  if (m.parts.size() != ms.part_count) return false;
  for (std::size_t i = 0; i < m.parts.size(); ++i)
    if (m.parts[i].origin != i) return false;
  return true;
}

bool anchor_edit(const ParsedRequest& r, const Message& m, const Part& p, Edit& out) {
  if (!p.cache_anchor || !r.takes_cache_anchor()) return false;
  const PartSource* src = source_of(r, m, p);
  if (!src || src->elem == json::kNone || r.doc.node(src->elem).type != json::Type::Object) return false;
  if (r.doc.raw(src->elem).find("\"cache_control\"") != std::string_view::npos) return false;  // marked already
  const std::uint32_t close = r.doc.node(src->elem).end - 1;  // the block's '}'
  out = Edit{close, close, ",\"cache_control\":{\"type\":\"ephemeral\"}", {}};
  return true;
}

bool part_edits(const ParsedRequest& r, const Message& m, std::vector<Edit>& out, std::string& err) {
  for (const Part& p : m.parts) {
    if (p.edited) {
      const PartSource* src = source_of(r, m, p);
      if (!src) {
        err = "edited part has no source";
        return false;
      }
      Edit e;
      if (!p.editable || !slot_edit(src->slot, p, e, err)) {
        if (err.empty()) err = "edited a part marked not editable";
        return false;
      }
      out.push_back(std::move(e));
    }
    // After the text's edit, as element_bytes() writes it: an inserted
    // "content" comes before the breakpoint either way (the sorts are stable).
    Edit anchor;
    if (anchor_edit(r, m, p, anchor)) out.push_back(std::move(anchor));
  }
  return true;
}

bool element_bytes(const ParsedRequest& r, std::string_view body, const Message& m, const Part& p,
                   std::string& out, std::string& err) {
  const PartSource* src = source_of(r, m, p);
  if (!src || src->elem == json::kNone) {
    err = "part has no original element";
    return false;
  }
  const json::Node& n = r.doc.node(src->elem);
  std::vector<Edit> edits;
  if (p.edited) {
    Edit e;
    if (!p.editable || !slot_edit(src->slot, p, e, err)) {
      if (err.empty()) err = "edited a part marked not editable";
      return false;
    }
    if (e.begin < n.begin || e.end > n.end) {
      err = "part slot outside its element";
      return false;
    }
    edits.push_back(std::move(e));
  }
  Edit anchor;  // after any edit of the text: an inserted "content" comes first
  if (anchor_edit(r, m, p, anchor)) edits.push_back(std::move(anchor));
  append_with_edits(out, body, n.begin, n.end, edits);
  return true;
}

std::vector<std::uint32_t> children(const json::Document& doc, std::uint32_t container) {
  std::vector<std::uint32_t> out;
  const json::Node& c = doc.node(container);
  if (c.type != json::Type::Array && c.type != json::Type::Object) return out;
  out.reserve(c.count);
  for (std::uint32_t k = c.first; k != json::kNone; k = doc.node(k).next) out.push_back(k);
  return out;
}

namespace {
std::uint32_t start_of(const json::Document& doc, std::uint32_t child, bool object) {
  return object ? doc.node(child).key_begin : doc.node(child).begin;
}
}  // namespace

namespace {

constexpr std::size_t kSeparator = ~std::size_t{0};

// Shared by both rebuild() flavours: `add(bytes, i)` receives each piece in
// order, i being the item's index or kSeparator for the container's own bytes.
template <class Add>
void rebuild_pieces(const json::Document& doc, std::uint32_t container, const std::vector<Item>& items, Add&& add) {
  std::string_view text = doc.text();
  const bool fresh = container == json::kNone ||
                     (doc.node(container).type != json::Type::Array && doc.node(container).type != json::Type::Object);
  const bool object = !fresh && doc.node(container).type == json::Type::Object;
  const auto kids = fresh ? std::vector<std::uint32_t>{} : children(doc, container);
  std::string_view prefix = "[", suffix = "]", default_sep = ",";
  if (!fresh) {
    const json::Node& c = doc.node(container);
    if (kids.empty()) {
      prefix = text.substr(c.begin, 1);
      suffix = text.substr(c.begin + 1, c.end - c.begin - 1);
    } else {
      std::uint32_t first = start_of(doc, kids.front(), object);
      prefix = text.substr(c.begin, first - c.begin);
      std::uint32_t last_end = doc.node(kids.back()).end;
      suffix = text.substr(last_end, c.end - last_end);
      if (kids.size() >= 2) {
        std::uint32_t e0 = doc.node(kids[0]).end;
        default_sep = text.substr(e0, start_of(doc, kids[1], object) - e0);
      }
    }
  }
  auto sep_before = [&](int pos) -> std::string_view {
    if (pos <= 0 || static_cast<std::size_t>(pos) >= kids.size()) return default_sep;
    std::uint32_t e = doc.node(kids[pos - 1]).end;
    return text.substr(e, start_of(doc, kids[pos], object) - e);
  };
  std::size_t kept = 0;
  for (const Item& it : items) kept += it.view().empty() ? 0 : 1;
  if (kept == 0 && !kids.empty()) {
    add(object ? std::string_view("{}") : std::string_view("[]"), kSeparator);  // nothing kept
    return;
  }
  add(prefix, kSeparator);
  bool first = true;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    if (it.view().empty()) continue;
    if (!first) add(sep_before(it.pos), kSeparator);
    add(it.view(), i);
    first = false;
  }
  add(suffix, kSeparator);
}

}  // namespace

void rebuild(const json::Document& doc, std::uint32_t container, const std::vector<Item>& items,
             std::string& out) {
  rebuild_pieces(doc, container, items, [&](std::string_view s, std::size_t) { out += s; });
}

void rebuild(const json::Document& doc, std::uint32_t container, std::vector<Item>& items,
             std::vector<std::string_view>& out, std::deque<std::string>& store) {
  rebuild_pieces(doc, container, items, [&](std::string_view s, std::size_t i) {
    if (i != kSeparator && items[i].ref.empty()) {
      // The item's bytes move into the store, whose elements never move.
      store.push_back(std::move(items[i].bytes));
      s = store.back();
    }
    if (!s.empty()) out.push_back(s);
  });
}

std::string_view member_head(const json::Document& doc, std::uint32_t member) {
  const json::Node& n = doc.node(member);
  return doc.text().substr(n.key_begin, n.begin - n.key_begin);
}

Edit cut_member(const json::Document& doc, std::uint32_t obj, std::uint32_t member) {
  const auto kids = children(doc, obj);
  std::size_t k = std::find(kids.begin(), kids.end(), member) - kids.begin();
  Edit e;
  const json::Node& n = doc.node(member);
  if (k + 1 < kids.size()) {
    e.begin = n.key_begin;
    e.end = doc.node(kids[k + 1]).key_begin;
  } else if (k > 0) {
    e.begin = doc.node(kids[k - 1]).end;
    e.end = n.end;
  } else {
    e.begin = n.key_begin;
    e.end = n.end;
  }
  return e;
}

}  // namespace td::providers::splice

#include "providers/part_splice.hpp"

#include <algorithm>

#include "providers/format_adapter.hpp"
#include "providers/parsed_message_memo.hpp"

namespace td::providers::splice {

using pruning::kNewOrigin;
using pruning::Message;
using pruning::Part;

bool slot_edit(const ParsedRequest& r, const TextSlot& slot, const Part& p, json::Edit& out, std::string& err) {
  out.begin = slot.begin;
  out.end = slot.end;
  out.text.clear();
  switch (slot.kind) {
    case TextSlot::Kind::None:
      err = "edited a part that cannot be re-rendered";
      return false;
    case TextSlot::Kind::String:
      append_json_text(r.memo, p, out.text);
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
      append_json_text(r.memo, p, out.text);
      out.text.push_back('}');
      return true;
    case TextSlot::Kind::Insert:
      if (!slot.object_empty) out.text.push_back(',');
      out.text.push_back('"');
      out.text += slot.key;
      out.text += "\":";
      append_json_text(r.memo, p, out.text);
      return true;
  }
  err = "bad slot";
  return false;
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

namespace {
// The format's cache breakpoint on part `p`'s block, if it takes one there.
bool anchor_edit(const ParsedRequest& r, const Message& m, const Part& p, json::Edit& out) {
  return p.cache_anchor != 0 && cache_anchors_free(r) >= p.cache_anchor &&
         adapter(r.format).cache_anchor_edit(r, m, p, out);
}
}  // namespace

bool part_edits(const ParsedRequest& r, const Message& m, std::vector<json::Edit>& out, std::string& err) {
  for (const Part& p : m.parts) {
    if (p.edited) {
      const PartSource* src = source_of(r, m, p);
      if (!src) {
        err = "edited part has no source";
        return false;
      }
      json::Edit e;
      if (!p.editable || !slot_edit(r, src->slot, p, e, err)) {
        if (err.empty()) err = "edited a part marked not editable";
        return false;
      }
      out.push_back(std::move(e));
    }
    // After the text's edit, as element_bytes() writes it: an inserted
    // "content" comes before the breakpoint either way (the sorts are stable).
    json::Edit anchor;
    if (anchor_edit(r, m, p, anchor)) out.push_back(std::move(anchor));
  }
  return true;
}

bool element_bytes(const ParsedRequest& r, std::string_view body, const Message& m, const Part& p, std::string& out,
                   std::string& err) {
  const PartSource* src = source_of(r, m, p);
  if (!src || src->elem == json::kNone) {
    err = "part has no original element";
    return false;
  }
  const json::Node& n = r.doc.node(src->elem);
  std::vector<json::Edit> edits;
  if (p.edited) {
    json::Edit e;
    if (!p.editable || !slot_edit(r, src->slot, p, e, err)) {
      if (err.empty()) err = "edited a part marked not editable";
      return false;
    }
    if (e.begin < n.begin || e.end > n.end) {
      err = "part slot outside its element";
      return false;
    }
    edits.push_back(std::move(e));
  }
  json::Edit anchor;  // after any edit of the text: an inserted "content" comes first
  if (anchor_edit(r, m, p, anchor)) edits.push_back(std::move(anchor));
  json::append_with_edits(out, body, n.begin, n.end, edits);
  return true;
}

}  // namespace td::providers::splice

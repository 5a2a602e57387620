#include "json/splice.hpp"

#include <algorithm>

namespace td::json {

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
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
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

std::vector<std::uint32_t> children(const Document& doc, std::uint32_t container) {
  std::vector<std::uint32_t> out;
  const Node& c = doc.node(container);
  if (c.type != Type::Array && c.type != Type::Object) return out;
  out.reserve(c.count);
  for (std::uint32_t k = c.first; k != kNone; k = doc.node(k).next) out.push_back(k);
  return out;
}

namespace {
std::uint32_t start_of(const Document& doc, std::uint32_t child, bool object) {
  return object ? doc.node(child).key_begin : doc.node(child).begin;
}
}  // namespace

namespace {

constexpr std::size_t kSeparator = ~std::size_t{0};

// Shared by both rebuild() flavours: `add(bytes, i)` receives each piece in
// order, i being the item's index or kSeparator for the container's own bytes.
template <class Add>
void rebuild_pieces(const Document& doc, std::uint32_t container, const std::vector<Item>& items, Add&& add) {
  std::string_view text = doc.text();
  const bool fresh =
      container == kNone || (doc.node(container).type != Type::Array && doc.node(container).type != Type::Object);
  const bool object = !fresh && doc.node(container).type == Type::Object;
  const auto kids = fresh ? std::vector<std::uint32_t>{} : children(doc, container);
  std::string_view prefix = "[", suffix = "]", default_sep = ",";
  if (!fresh) {
    const Node& c = doc.node(container);
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

void rebuild(const Document& doc, std::uint32_t container, const std::vector<Item>& items, std::string& out) {
  rebuild_pieces(doc, container, items, [&](std::string_view s, std::size_t) { out += s; });
}

void rebuild(const Document& doc, std::uint32_t container, std::vector<Item>& items, std::vector<std::string_view>& out,
             std::deque<std::string>& store) {
  rebuild_pieces(doc, container, items, [&](std::string_view s, std::size_t i) {
    if (i != kSeparator && items[i].ref.empty()) {
      // The item's bytes move into the store, whose elements never move.
      store.push_back(std::move(items[i].bytes));
      s = store.back();
    }
    if (!s.empty()) out.push_back(s);
  });
}

std::string_view member_head(const Document& doc, std::uint32_t member) {
  const Node& n = doc.node(member);
  return doc.text().substr(n.key_begin, n.begin - n.key_begin);
}

Edit cut_member(const Document& doc, std::uint32_t obj, std::uint32_t member) {
  const auto kids = children(doc, obj);
  std::size_t k = std::find(kids.begin(), kids.end(), member) - kids.begin();
  Edit e;
  const Node& n = doc.node(member);
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

}  // namespace td::json

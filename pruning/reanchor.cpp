#include "pruning/reanchor.hpp"

#include <algorithm>

#include "pruning/text.hpp"

namespace td::pruning {

bool reanchor_due(const Profile& profile, std::uint32_t turns, bool compressed) {
  if (compressed && profile.reanchor_after_compression) return true;
  return profile.reanchor_every_turns > 0 && turns > 0 && turns % profile.reanchor_every_turns == 0;
}

std::string anchor_text(const Conversation& conv, const Profile& profile) {
  std::string text = profile.anchor;
  if (text.empty()) {
    const auto first = std::find_if(conv.messages.begin(), conv.messages.end(),
                                    [](const Message& m) { return m.role == Role::User && !m.removed; });
    if (first == conv.messages.end()) return {};
    for (const Part& p : first->parts)
      if (p.kind == PartKind::Text) text += (text.empty() ? "" : "\n") + p.text;
  }
  if (text.size() > profile.reanchor_max_bytes) {
    text.resize(text::floor_boundary(text, profile.reanchor_max_bytes));
    text += " [...]";
  }
  return text;
}

void append_user_note(Conversation& conv, std::string text) {
  auto& msgs = conv.messages;
  std::size_t at = msgs.size();
  while (at > 0 && (msgs[at - 1].role == Role::Assistant || msgs[at - 1].removed)) --at;
  if (at == 0) at = msgs.size();
  Part p;
  p.text = std::move(text);
  p.edited = true;
  Message m;
  m.role = Role::User;
  m.changed = true;
  m.parts.push_back(std::move(p));
  msgs.insert(msgs.begin() + static_cast<std::ptrdiff_t>(at), std::move(m));
}

std::string reanchor(Conversation& conv, const Profile& profile) {
  // Already restated: a text part of the newest turn starts with the marker.
  for (auto m = conv.messages.rbegin(); m != conv.messages.rend() && m->role != Role::Assistant; ++m)
    for (const Part& p : m->parts)
      if (p.kind == PartKind::Text && std::string_view(p.text).substr(0, kReanchorMarker.size()) == kReanchorMarker)
        return {};
  const std::string anchor = anchor_text(conv, profile);
  if (anchor.empty()) return {};
  std::string restated = std::string(kReanchorMarker) + "\n" + anchor;
  append_user_note(conv, restated);
  return restated;
}

}  // namespace td::pruning

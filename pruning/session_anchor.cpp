#include "pruning/session_anchor.hpp"

#include "pruning/text_hash.hpp"

namespace td::pruning {

std::uint64_t session_anchor(const Conversation& conv) {
  std::uint64_t h = 0;
  bool any = false;
  // Mixes the role and every part's text hash of the messages up to the
  // first user message (system messages anywhere before it included).
  for (const Message& m : conv.messages) {
    if (m.removed) continue;
    any = true;
    const std::uint64_t role[2] = {h, std::uint64_t(m.role) + 1};
    h = tok::hash_bytes(role, sizeof role);
    for (const Part& p : m.parts) {
      const tok::Hash128 t = text_hash(p);
      const std::uint64_t words[3] = {h, t.lo, t.hi};
      h = tok::hash_bytes(words, sizeof words);
    }
    if (m.role == Role::User) break;
  }
  return any ? (h ? h : 1) : 0;
}

}  // namespace td::pruning

// The content hash of a part's text, computed once per text.
//
// The count cache (message_hash), the strategies' memo and the dedup of
// identical tool outputs all key on a part's text; a 50 KB request used to
// hash its tool outputs three times over. The first use stores the hash in
// the part (Part::digest) and every later one reads it back. set_text() is
// the one way to change a part's text once it exists, and it drops the
// stored hash; copies of a part carry the hash with the text. The text's
// size is kept too, so that a direct write that skipped set_text() is still
// caught unless it kept the size.
#pragma once

#include "pruning/conversation.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

// Whether `p` holds its text's hash already (text_hash() then costs nothing).
inline bool text_hash_held(const Part& p) { return p.digest.valid && p.digest.size == p.text.size(); }

inline tok::Hash128 text_hash(const Part& p) {
  if (!text_hash_held(p)) {
    const tok::Hash128 h = tok::hash128(p.text.data(), p.text.size());
    p.digest = {h.lo, h.hi, p.text.size(), true};
  }
  return {p.digest.lo, p.digest.hi};
}

}  // namespace td::pruning

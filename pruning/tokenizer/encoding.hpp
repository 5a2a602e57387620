// An OpenAI encoding (o200k_base, cl100k_base): pretokenizer + vocabulary.
// Counts and ids equal tiktoken's encode_ordinary(): special-token text such
// as "<|endoftext|>" is ordinary text. The embedded vocabulary is parsed on
// first use (thread-safe), so a process that never counts never pays for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pruning/tokenizer/pretokenizer.hpp"
#include "pruning/tokenizer/vocab.hpp"

namespace td::tok {

enum class EncodingId : std::uint8_t { O200kBase, Cl100kBase };

std::string_view encoding_name(EncodingId id);
std::optional<EncodingId> encoding_from_name(std::string_view name);

class Encoding {
 public:
  // The embedded encoding, loaded on first call. Throws std::runtime_error
  // only if the embedded vocabulary is corrupt (a build error, not input).
  static const Encoding& get(EncodingId id);
  // Whether get(id) has loaded it yet (for tests of the lazy loading).
  static bool loaded(EncodingId id);

  Encoding(EncodingId id, Pattern pattern) : id_(id), pattern_(pattern) {}
  bool load(std::string_view tiktoken_text, std::string* error) { return vocab_.parse(tiktoken_text, error); }

  std::uint64_t count(std::string_view text) const;
  std::vector<std::uint32_t> encode(std::string_view text) const;

  EncodingId id() const { return id_; }
  std::string_view name() const { return encoding_name(id_); }
  const Vocab& vocab() const { return vocab_; }

 private:
  EncodingId id_;
  Pattern pattern_;
  Vocab vocab_;
};

}  // namespace td::tok

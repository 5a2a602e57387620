#include "pruning/tokenizer/counter.hpp"

#include <cmath>

namespace td::tok {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// `family` itself or `family-...` / `family:...` (o1, o1-mini, o3:2025...).
bool is_family(std::string_view model, std::string_view family) {
  if (!starts_with(model, family)) return false;
  return model.size() == family.size() || model[family.size()] == '-' || model[family.size()] == ':' ||
         model[family.size()] == '.';
}

std::string_view lower_ascii(std::string_view in, char (&buf)[128]) {
  std::size_t n = std::min(in.size(), sizeof buf);
  for (std::size_t i = 0; i < n; ++i) {
    char c = in[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return {buf, n};
}

}  // namespace

std::uint64_t BpeCounter::cache_salt() const {
  // Distinct per encoding and stable across runs.
  return id_ == EncodingId::O200kBase ? 0x6f323030'6b626173ull : 0x636c3130'306b6261ull;
}

const BpeCounter& exact_counter(EncodingId id) {
  static const BpeCounter o200k(EncodingId::O200kBase), cl100k(EncodingId::Cl100kBase);
  return id == EncodingId::O200kBase ? o200k : cl100k;
}

std::uint64_t EstimatingCounter::estimate(std::uint64_t bytes, double ratio) {
  if (bytes == 0) return 0;
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / 4.0 * ratio));
}

std::optional<EncodingId> encoding_for_model(std::string_view model) {
  char buf[128];
  std::string_view m = lower_ascii(model, buf);
  if (auto slash = m.rfind('/'); slash != std::string_view::npos) m = m.substr(slash + 1);
  for (std::string_view f : {"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "gpt-oss"})
    if (is_family(m, f)) return EncodingId::O200kBase;
  if (starts_with(m, "chatgpt-")) return EncodingId::O200kBase;
  if (is_family(m, "gpt-4") || starts_with(m, "gpt-3.5") || starts_with(m, "gpt-35") ||
      starts_with(m, "text-embedding-3") || m == "text-embedding-ada-002")
    return EncodingId::Cl100kBase;
  return std::nullopt;
}

std::unique_ptr<pruning::TokenCounter> counter_for_model(std::string_view model, const Calibration* calibration) {
  if (auto id = encoding_for_model(model)) return std::make_unique<BpeCounter>(*id);
  if (calibration) return std::make_unique<EstimatingCounter>(calibration->ratio_cell(model));
  return std::make_unique<EstimatingCounter>(1.0);
}

}  // namespace td::tok

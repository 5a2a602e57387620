#include "pruning/tokenizer/counter.hpp"

#include <algorithm>
#include <array>
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

namespace {

// Tokens per byte of each byte value, in 1/65536ths (see EstimateMethod).
constexpr auto kByteWeights = [] {
  std::array<std::int32_t, 256> w{};
  auto fixed = [](double x) { return static_cast<std::int32_t>(x * 65536.0 + (x < 0 ? -0.5 : 0.5)); };
  for (int b = 0; b < 256; ++b) {
    double x;
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'))
      x = 0.229;
    else if (b >= '0' && b <= '9')
      x = 0.901;
    else if (b == ' ' || b == '\t' || b == '\n' || b == '\r')
      x = 0.096;
    else if (b < 0x80)
      x = 0.587;
    else if (b >= 0xC0)
      x = -0.181;
    else
      x = 0.552;
    w[static_cast<std::size_t>(b)] = fixed(x);
  }
  return w;
}();

}  // namespace

double raw_estimate(std::string_view text, EstimateMethod method) {
  if (method == EstimateMethod::BytesOver4) return static_cast<double>(text.size()) / 4.0;
  std::int64_t sum = 0;
  for (unsigned char b : text) sum += kByteWeights[b];
  return sum <= 0 ? 0.0 : static_cast<double>(sum) / 65536.0;
}

std::uint64_t EstimatingCounter::count(std::string_view text) const {
  if (text.empty()) return 0;
  const double raw = raw_estimate(text, method_);
  // At least one token for any non-empty text; never negative on odd bytes.
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(raw * ratio() - 1e-9)));
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

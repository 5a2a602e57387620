#include "pruning/tokenizer/counter.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The sum of kByteWeights over `text`. The weights depend only on the
// byte's class, so the sum is each class's count times its weight: counted
// 16 bytes at a time, where the table costs a load and an add a byte (the
// calibrated estimator counts every message of every request, having no
// cache: docs/design.md §Memos and caches). The same integer either way.
std::int64_t weight_sum(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t n = text.size(), i = 0;
  std::int64_t sum = 0;
#if defined(__SSE2__)
  std::uint64_t letters = 0, digits = 0, blanks = 0, high = 0, leads = 0;
  const __m128i zero = _mm_setzero_si128();
  while (n - i >= 16) {
    // Per-byte match counts, at most 255 blocks before they are widened.
    __m128i l = zero, d = zero, w = zero, h = zero, ld = zero;
    for (std::size_t blocks = std::min<std::size_t>((n - i) / 16, 255); blocks > 0; --blocks, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i a = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));  // 0..25: a letter
      l = _mm_sub_epi8(l, _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(25)), a));
      const __m128i dg = _mm_sub_epi8(v, _mm_set1_epi8('0'));  // 0..9: a digit
      d = _mm_sub_epi8(d, _mm_cmpeq_epi8(_mm_min_epu8(dg, _mm_set1_epi8(9)), dg));
      const __m128i bl =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
                       _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
      w = _mm_sub_epi8(w, bl);
      h = _mm_sub_epi8(h, _mm_cmplt_epi8(v, zero));  // >= 0x80
      const __m128i top = _mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xC0)));
      ld = _mm_sub_epi8(ld, _mm_cmpeq_epi8(top, _mm_set1_epi8(static_cast<char>(0xC0))));  // >= 0xC0
    }
    auto widen = [&](__m128i c) {
      const __m128i s = _mm_sad_epu8(c, zero);
      return static_cast<std::uint64_t>(_mm_cvtsi128_si32(s)) +
             static_cast<std::uint64_t>(_mm_cvtsi128_si32(_mm_srli_si128(s, 8)));
    };
    letters += widen(l);
    digits += widen(d);
    blanks += widen(w);
    high += widen(h);
    leads += widen(ld);
  }
  const std::uint64_t other = i - high - letters - digits - blanks;  // the rest of ASCII
  sum = std::int64_t(letters) * kByteWeights['a'] + std::int64_t(digits) * kByteWeights['0'] +
        std::int64_t(blanks) * kByteWeights[' '] + std::int64_t(other) * kByteWeights['!'] +
        std::int64_t(leads) * kByteWeights[0xC0] + std::int64_t(high - leads) * kByteWeights[0x80];
#endif
  for (; i < n; ++i) sum += kByteWeights[p[i]];
  return sum;
}

// A byte-class weight sum as tokens before the ratio (weights are 1/65536ths).
double tokens_of_sum(std::int64_t sum) { return sum <= 0 ? 0.0 : static_cast<double>(sum) / 65536.0; }

}  // namespace

double raw_estimate(std::string_view text, EstimateMethod method) {
  if (method == EstimateMethod::BytesOver4) return static_cast<double>(text.size()) / 4.0;
  return tokens_of_sum(weight_sum(text));
}

namespace {

std::uint64_t estimate(double raw, double ratio) {
  // At least one token for any non-empty text; never negative on odd bytes.
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(raw * ratio - 1e-9)));
}

}  // namespace

std::uint64_t EstimatingCounter::count(std::string_view text) const {
  if (text.empty()) return 0;
  return estimate(raw_estimate(text, method_), ratio());
}

// BytesOver4 needs no pass over the bytes: nothing to cache.
std::uint64_t EstimatingCounter::raw_salt() const {
  return method_ == EstimateMethod::ByteClass ? 0x62797465636c7331ULL : 0;
}

std::uint64_t EstimatingCounter::raw(std::string_view text) const {
  return static_cast<std::uint64_t>(weight_sum(text));
}

// The same arithmetic as count() on a non-empty text whose raw() this is.
std::uint64_t EstimatingCounter::count_from_raw(std::uint64_t raw) const {
  return estimate(tokens_of_sum(static_cast<std::int64_t>(raw)), ratio());
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

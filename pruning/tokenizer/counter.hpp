// The TokenCounter implementations and which one a model gets:
//   o200k_base  gpt-4o*, gpt-4.1*, gpt-4.5*, gpt-5*, o1*, o3*, o4*, chatgpt-*, gpt-oss*
//   cl100k_base gpt-4, gpt-4-* (not 4o/4.1/4.5), gpt-3.5*, text-embedding-3*, text-embedding-ada-002
//   estimator   everything else (Gemini, Claude, ...): a byte-class estimate
//               times a ratio calibrated per model from billed usage (calibration.hpp)
// A provider prefix ("openai/gpt-4o", "azure/gpt-4") is ignored.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string_view>

#include "pruning/token_counter.hpp"
#include "pruning/tokenizer/calibration.hpp"
#include "pruning/tokenizer/encoding.hpp"

namespace td::tok {

// Exact counts of one encoding (the vocabulary loads on the first count).
class BpeCounter final : public pruning::TokenCounter {
 public:
  explicit BpeCounter(EncodingId id) : id_(id) {}
  std::uint64_t count(std::string_view text) const override { return Encoding::get(id_).count(text); }
  std::uint64_t cache_salt() const override;
  bool exact() const override { return true; }
  EncodingId encoding() const { return id_; }

 private:
  EncodingId id_;
};

// The process-wide exact counter of an encoding.
const BpeCounter& exact_counter(EncodingId id);

// How the estimator turns text into a raw token estimate.
//   ByteClass   a weight per byte class, fitted (least squares on relative
//               error) to exact o200k counts of the 648 segments of the
//               benchmark corpus: ASCII letter 0.229, digit 0.901, space/tab/
//               CR/LF 0.096, other ASCII 0.587, UTF-8 lead byte -0.181,
//               continuation byte 0.552 tokens. Its error against bytes/4:
//               docs/benchmarks.md §Token counting.
//   BytesOver4  ceil(bytes / 4): bytes, not characters (characters
//               under-count multilingual text).
enum class EstimateMethod : std::uint8_t { ByteClass, BytesOver4 };

// The raw (uncalibrated) estimate, before rounding.
double raw_estimate(std::string_view text, EstimateMethod method);

// ceil(raw_estimate * ratio). With a ratio cell the ratio follows the
// calibration as it learns; without one it is fixed.
class EstimatingCounter final : public pruning::TokenCounter {
 public:
  explicit EstimatingCounter(double ratio = 1.0, EstimateMethod method = EstimateMethod::ByteClass)
      : fixed_(ratio), method_(method) {}
  explicit EstimatingCounter(const std::atomic<double>* cell, EstimateMethod method = EstimateMethod::ByteClass)
      : cell_(cell), method_(method) {}
  std::uint64_t count(std::string_view text) const override;
  // ByteClass: raw() is the byte-class weight sum (its bits), a function of
  // the text alone; count() is that sum times the ratio, rounded up.
  std::uint64_t raw_salt() const override;
  std::uint64_t raw(std::string_view text) const override;
  std::uint64_t count_from_raw(std::uint64_t raw) const override;
  double ratio() const { return cell_ ? cell_->load(std::memory_order_relaxed) : fixed_; }
  EstimateMethod method() const { return method_; }

 private:
  double fixed_ = 1.0;
  const std::atomic<double>* cell_ = nullptr;
  EstimateMethod method_;
};

// The encoding a model is billed in, or nullopt if it has no local tokenizer.
std::optional<EncodingId> encoding_for_model(std::string_view model);

// The counter for a model: the exact one, or an estimator that follows
// `calibration` for this model (a fixed bytes/4 without one).
std::unique_ptr<pruning::TokenCounter> counter_for_model(std::string_view model,
                                                         const Calibration* calibration = nullptr);

}  // namespace td::tok

// Per-model calibration of the token estimator from what upstreams report.
//
// For models without a local tokenizer (Gemini, Claude) tokendiet estimates
// the count from the bytes (counter.hpp, EstimateMethod). Every response then
// says how many prompt tokens were really
// billed; the ratio billed/estimated is kept per model as a moving average and
// multiplies later estimates. A pure, thread-safe object: the ledger persists
// state() and restores it with set_state().
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace td::tok {

struct ModelCalibration {
  std::string model;
  double ratio = 1.0;         // billed tokens / raw estimate
  std::uint64_t samples = 0;  // observations folded in
};

class Calibration {
 public:
  // alpha: weight of a new observation once warmed up. The first samples are
  // averaged evenly (weight 1/n) so a fresh model converges at once.
  explicit Calibration(double alpha = 0.1) : alpha_(alpha) {}

  // Upstream billed `billed` prompt tokens for a request whose raw
  // (uncalibrated) estimate was `raw_estimate`. Tiny requests are ignored:
  // their per-request overhead would dominate the ratio.
  void observe(std::string_view model, std::uint64_t raw_estimate, std::uint64_t billed);

  // The model's ratio (1.0 until observed).
  double ratio(std::string_view model) const;

  // A cell that always holds the model's current ratio; its address is stable
  // for the life of this object, so an estimator can read it without a lock.
  const std::atomic<double>* ratio_cell(std::string_view model) const;

  std::vector<ModelCalibration> state() const;
  void set_state(const std::vector<ModelCalibration>& state);

  static constexpr std::uint64_t kMinRawEstimate = 64;
  static constexpr double kMinRatio = 0.25, kMaxRatio = 4.0;

 private:
  struct Cell {
    std::atomic<double> ratio{1.0};
    std::uint64_t samples = 0;  // guarded by mu_
  };
  Cell& cell(std::string_view model) const;  // mu_ held

  double alpha_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::unique_ptr<Cell>, std::less<>> cells_;
};

}  // namespace td::tok

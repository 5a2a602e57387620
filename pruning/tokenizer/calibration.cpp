#include "pruning/tokenizer/calibration.hpp"

#include <algorithm>

namespace td::tok {

Calibration::Cell& Calibration::cell(std::string_view model) const {
  auto it = cells_.find(model);
  if (it == cells_.end()) it = cells_.emplace(std::string(model), std::make_unique<Cell>()).first;
  return *it->second;
}

void Calibration::observe(std::string_view model, std::uint64_t raw_estimate, std::uint64_t billed) {
  if (raw_estimate < kMinRawEstimate || billed == 0) return;
  const double sample =
      std::clamp(static_cast<double>(billed) / static_cast<double>(raw_estimate), kMinRatio, kMaxRatio);
  std::lock_guard lock(mu_);
  Cell& c = cell(model);
  ++c.samples;
  const double weight = std::max(alpha_, 1.0 / static_cast<double>(c.samples));
  const double old = c.ratio.load(std::memory_order_relaxed);
  c.ratio.store(old + weight * (sample - old), std::memory_order_relaxed);
}

double Calibration::ratio(std::string_view model) const {
  std::lock_guard lock(mu_);
  auto it = cells_.find(model);
  return it == cells_.end() ? 1.0 : it->second->ratio.load(std::memory_order_relaxed);
}

const std::atomic<double>* Calibration::ratio_cell(std::string_view model) const {
  std::lock_guard lock(mu_);
  return &cell(model).ratio;
}

std::vector<ModelCalibration> Calibration::state() const {
  std::lock_guard lock(mu_);
  std::vector<ModelCalibration> out;
  for (const auto& [model, c] : cells_)
    if (c->samples) out.push_back({model, c->ratio.load(std::memory_order_relaxed), c->samples});
  return out;
}

void Calibration::set_state(const std::vector<ModelCalibration>& state) {
  std::lock_guard lock(mu_);
  for (const auto& s : state) {
    Cell& c = cell(s.model);
    c.ratio.store(std::clamp(s.ratio, kMinRatio, kMaxRatio), std::memory_order_relaxed);
    c.samples = s.samples;
  }
}

}  // namespace td::tok

#include "pruning/loss_cap.hpp"

#include <algorithm>

namespace td::pruning {

bool pays_back(const StepCostOptions& opt, std::uint64_t saved, double rewritten, double was_cached,
               std::uint32_t grid_turns) {
  const double cost = opt.cache_write_price * rewritten - opt.cache_read_price * was_cached;
  const double turns_then = double(grid_turns + std::max<std::uint32_t>(opt.window_turns, 1));
  const double horizon = std::min(double(opt.payback_requests), opt.payback_turn_fraction * turns_then);
  return opt.cache_read_price * double(saved) * horizon >= cost;
}

std::vector<std::uint32_t> request_ends(const Conversation& conv) {
  const auto& msgs = conv.messages;
  const auto size = static_cast<std::uint32_t>(msgs.size());
  std::vector<std::uint32_t> ends;
  // An assistant message was the answer to a request holding everything before it.
  for (std::uint32_t e = 1; e < size; ++e)
    if (msgs[e].role == Role::Assistant && msgs[e - 1].role != Role::Assistant) ends.push_back(e);
  ends.push_back(size);  // this request
  return ends;
}

LossCap::LossCap(const Conversation& conv, const StepCostOptions& opt, const std::vector<std::uint64_t>& orig_ps,
                 const std::vector<std::uint64_t>& plan_ps, const HeldForms* held)
    : read_price_(opt.cache_read_price),
      write_price_(opt.cache_write_price),
      max_loss_(opt.max_loss),
      orig_ps_(orig_ps),
      plan_ps_(plan_ps),
      held_(held && !held->empty() ? held : nullptr),
      ends_(pruning::request_ends(conv)) {
  current_ = {ends_[0], 0, ends_[0]};
}

std::size_t LossCap::request_at(std::uint32_t end) const {
  auto it = std::lower_bound(ends_.begin(), ends_.end(), end);
  return it == ends_.end() ? ends_.size() - 1 : static_cast<std::size_t>(it - ends_.begin());
}

std::uint64_t LossCap::sent(std::uint32_t end, std::uint32_t frontier) const {
  const std::uint32_t f = std::min(frontier, end);
  return plan_ps_[f] + orig_ps_[end] - orig_ps_[f] + (held_ ? held_->extra(end, frontier) : 0);
}

double LossCap::cost(const Request& now, const Request* prev, bool with) const {
  const double total = double(with ? sent(now.end, now.frontier) : orig_ps_[now.end]);
  double shared = 0;
  if (prev)  // the messages before the first change, as the previous request sent them
    shared = double(with ? sent(std::min(now.first, prev->end), prev->frontier) : orig_ps_[prev->end]);
  shared = std::min(shared, total);
  return read_price_ * shared + write_price_ * (total - shared);
}

void LossCap::close_before(std::size_t r) {
  while (open_ < r) {
    const Request* prev = last_.end ? &last_ : nullptr;
    closed_.without += cost(current_, prev, false);
    closed_.with += cost(current_, prev, true);
    last_ = current_;
    ++open_;
    current_ = {ends_[open_], last_.frontier, ends_[open_]};
  }
}

LossCap::Totals LossCap::through(std::uint32_t end) {
  close_before(request_at(end));
  const Request* prev = last_.end ? &last_ : nullptr;
  return {closed_.without + cost(current_, prev, false), closed_.with + cost(current_, prev, true)};
}

bool LossCap::allows(std::uint32_t first, std::uint32_t to, std::uint32_t end) {
  close_before(request_at(end));
  const Request saved = current_;
  current_.frontier = to;
  current_.first = std::min(current_.first, first);
  const Totals t = through(end);
  current_ = saved;
  return t.with <= (1.0 + max_loss_) * t.without;
}

void LossCap::take(std::uint32_t first, std::uint32_t to, std::uint32_t end) {
  close_before(request_at(end));
  current_.frontier = to;
  current_.first = std::min(current_.first, first);
}

}  // namespace td::pruning

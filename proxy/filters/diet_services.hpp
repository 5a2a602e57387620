// What the diet's filters (diet, archive write, quota, recall offer) are built
// with: the process's state (process_state()), which outlives them and every
// configuration (docs/design.md §Request flow).
#pragma once

#include <functional>
#include <memory>

#include "diet/diet_caches.hpp"
#include "diet/recap_summarizer.hpp"
#include "proxy/filters/runway_account.hpp"
#include "proxy/phases/off_thread.hpp"
#include "proxy/telemetry/work_pool.hpp"

namespace td::tok {
class Calibration;
}
namespace td::archive {
class Store;
}

namespace td::proxy {

// The archive as the diet uses it: the store (null: none, and then semantic
// eviction is off), read when a request comes since the archive is opened
// after the filters are built; the thread entries are written on (null: the
// request's own thread, for tests); what counts a failed write.
struct DietArchive {
  std::function<archive::Store*()> store{};
  JobQueue* thread = nullptr;
  std::function<void()> count_failure{};
  bool on() const { return store && store(); }
};

struct DietServices {
  diet::DietCaches* caches = nullptr;       // the diet's caches (required)
  tok::Calibration* calibration = nullptr;  // null: fixed bytes/4 estimates, nothing learned
  WorkPool* workers = nullptr;              // the diet threads; null: every diet on the request's thread
  PolicyState policy{};                     // the runway and session stores; none: the profile alone decides
  DietArchive archive{};                    // none: semantic eviction is off
  // Makes the recap summaries' outbound calls (null: every recap
  // extractive); needs `workers`.
  std::shared_ptr<const diet::RecapSummarizer> summarizer{};
};

}  // namespace td::proxy

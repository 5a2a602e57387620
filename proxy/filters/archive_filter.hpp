// GET /v1/tokendiet/archive/<id>: an archive entry given back to the API key
// that caused it (docs/design.md §The archive). Answered in phase 1, never
// sent upstream:
//
//   200  the entry's text exactly as it was evicted (text/plain), with
//        x-tokendiet-archive-tokens
//   404  no such entry for this request's API key (another key's entry, a
//        request without a key, an unknown or malformed id, or no archive),
//        in the provider's error shape with x-tokendiet-error:
//        archive_entry_not_found; an anonymous client's entries always
//   405  another method than GET or HEAD
//   503  the archive's thread did not answer within kReadWait (never upstream)
//
// The file is read on the archive's thread (process_state().archive_thread())
// while the request is paused (proxy/phases/off_thread.hpp): no file I/O on
// an I/O thread.
#pragma once

#include <chrono>
#include <functional>

#include "proxy/phases/filter.hpp"
#include "proxy/phases/off_thread.hpp"

namespace td::archive {
class Store;
}

namespace td::proxy {

class ArchiveFilter final : public Filter {
 public:
  static constexpr std::string_view kPathPrefix = "/v1/tokendiet/archive/";
  // How long a read may wait for the archive's thread.
  static constexpr std::chrono::milliseconds kReadWait{10'000};

  // `store()` the archive (null: none), read when a request comes, since the
  // archive is opened after the filters are built; `thread`: where files are
  // read (null: on the request's thread, for tests).
  ArchiveFilter(std::function<archive::Store*()> store, JobQueue* thread) : store_(std::move(store)), thread_(thread) {}
  std::string_view name() const override { return "archive"; }
  FilterResult request_filter(RequestContext& ctx, HeaderMap& headers) override;

 private:
  std::function<archive::Store*()> store_;
  JobQueue* thread_;
};

// The answer to a GET of `id` by the key `key_fp` from `store` (null: none).
LocalResponse archive_answer(const archive::Store* store, Provider provider, std::string_view key_fp,
                             std::string_view id);

}  // namespace td::proxy

// Archive write time (archive/store.hpp): what a request that evicts outputs
// waits for before it goes upstream. Per entry size: a new entry's write
// (temp file, fsync, rename, directory fsync, index append + fsync), the
// same entry again (a no-op), and a read back (with its id check).
//
//   cmake --build build --target archive_bench && build/scripts/bench/archive_bench [DIR] [ROUNDS]
//
// DIR (default: a new directory under /tmp) decides the file system measured.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "archive/store.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double p90(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() * 9 / 10];
}

// A distinct, tool-output-like text of `bytes` bytes.
std::string text_of(std::size_t bytes, int seed) {
  std::string s;
  s.reserve(bytes + 64);
  for (int i = 0; s.size() < bytes; ++i) s += "src/file_" + std::to_string(seed) + ".c:" + std::to_string(i) + ": ok\n";
  s.resize(bytes);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  bool made = false;
  if (dir.empty()) {
    char tmpl[] = "/tmp/td-archive-bench-XXXXXX";
    dir = mkdtemp(tmpl);
    made = true;
  }
  td::archive::Store store(dir + "/archive", td::archive::Store::Options{.retention = {0, {}}});
  std::printf("archive under %s, %d rounds per size (median, p90)\n\n", dir.c_str(), rounds);
  std::printf("| entry | new entry, ms | ms per MB | same entry again, ms | read, ms |\n|---|---|---|---|---|\n");
  int seed = 0;
  for (std::size_t bytes : {1u << 10, 16u << 10, 100u << 10, 1u << 20, 10u << 20}) {
    std::vector<double> write, again, read;
    for (int r = 0; r < rounds; ++r) {
      td::pruning::ArchivedOutput e;
      e.text = text_of(bytes, ++seed);
      e.id = td::pruning::archive_id(e.text);
      e.task = "bench";
      auto t = Clock::now();
      if (!store.write("0123456789abcdef", std::span(&e, 1))) {
        std::fprintf(stderr, "write failed: %s\n", store.last_error().c_str());
        return 1;
      }
      write.push_back(ms_since(t));
      t = Clock::now();
      store.write("0123456789abcdef", std::span(&e, 1));
      again.push_back(ms_since(t));
      t = Clock::now();
      if (!store.read("0123456789abcdef", e.id)) return 1;
      read.push_back(ms_since(t));
    }
    const double mb = static_cast<double>(bytes) / (1 << 20);
    std::printf("| %zu KiB | %.3f (%.3f) | %.2f | %.4f (%.4f) | %.3f (%.3f) |\n", bytes >> 10, median(write),
                p90(write), median(write) / mb, median(again), p90(again), median(read), p90(read));
  }
  if (made) std::filesystem::remove_all(dir);
  return 0;
}

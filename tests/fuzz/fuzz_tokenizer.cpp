// libFuzzer: any bytes through both exact BPE encodings and the estimator.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pruning/tokenizer/counter.hpp"

using namespace td::tok;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::uint64_t o200k = exact_counter(EncodingId::O200kBase).count(text);
  const std::uint64_t cl100k = exact_counter(EncodingId::Cl100kBase).count(text);
  if (size > 0 && (o200k == 0 || cl100k == 0 || o200k > size || cl100k > size)) __builtin_trap();
  (void)raw_estimate(text, EstimateMethod::ByteClass);
  return 0;
}

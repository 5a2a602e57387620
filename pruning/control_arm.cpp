#include "pruning/control_arm.hpp"

namespace td::pruning {

bool in_control_arm(std::uint64_t session, double fraction) {
  if (session == 0 || !(fraction > 0)) return false;
  // splitmix64's finaliser: consecutive or structured keys spread evenly.
  std::uint64_t z = session + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double unit = double(z >> 11) * 0x1.0p-53;  // [0, 1)
  return unit < fraction;
}

}  // namespace td::pruning

// The units of work the WGMMA grouped kernel's persistent grid walks (grouped_gemm_sm90.cu):
// tile_end's tiles in order, except where the last wave would hold no more tiles than half the
// grid. There each of its tiles goes as two halves of 64 rows to two CTAs (a half's second
// consumer warpgroup, its rows all past the half, only passes the stages on), so that the wave
// takes about half a tile's time rather than a whole one's: on a 132-SM GPU, 280 tiles of 128 x
// 256 made three waves, the last holding 16 tiles. Plain constexpr code (nvcc takes it into
// device code with --expt-relaxed-constexpr), so that the unit tests run it on the host.
#pragma once

namespace gexec::cuda {

struct GroupedWork {
  int count;  // units: the tiles below `whole`, then two halves of each tile from `whole` on
  int whole;
};

constexpr GroupedWork grouped_work(int tiles, int ctas) {
  const int last = ctas > 0 ? tiles % ctas : 0;
  const int split = last > 0 && 2 * last <= ctas ? last : 0;
  return {tiles + split, tiles - split};
}

// A unit's tile, and which 64 rows of it (half 0 or 1; -1: the whole tile).
struct GroupedUnit {
  int tile;
  int half;
};

constexpr GroupedUnit grouped_unit(const GroupedWork& w, int unit) {
  if (unit < w.whole) return {unit, -1};
  const int u = unit - w.whole;
  return {w.whole + u / 2, u % 2};
}

}  // namespace gexec::cuda

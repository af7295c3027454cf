// The WGMMA grouped kernel's units of work (grouped_work.hpp): a short last wave goes in halves,
// every tile is covered exactly once (whole, or as both its halves), and the halves fill the last
// wave and no more.
#include <vector>

#include "../../src/backends/cuda/grouped_work.hpp"
#include "catch.hpp"

using gexec::cuda::grouped_unit;
using gexec::cuda::grouped_work;

TEST_CASE("grouped work: a last wave of at most half the grid goes in halves, each tile covered once", "[grouped]") {
  // 280 tiles on 132 CTAs: two whole waves, then the 16 tiles left as 32 halves.
  const auto w = grouped_work(280, 132);
  CHECK(w.whole == 264);
  CHECK(w.count == 296);
  CHECK(grouped_unit(w, 263).half == -1);
  CHECK(grouped_unit(w, 264).tile == 264);
  CHECK(grouped_unit(w, 264).half == 0);
  CHECK(grouped_unit(w, 265).tile == 264);
  CHECK(grouped_unit(w, 265).half == 1);
  CHECK(grouped_unit(w, 295).tile == 279);
  // No split where the last wave fills more than half the grid, is full, or there are no tiles.
  for (int tiles : {256, 1024, 264, 0, 200}) {
    const auto n = grouped_work(tiles, 132);
    CHECK(n.count == tiles);
    CHECK(n.whole == tiles);
  }
  // Fewer tiles than half the grid: all of them in halves, one wave of units.
  CHECK(grouped_work(40, 132).count == 80);
  CHECK(grouped_work(40, 132).whole == 0);

  for (int ctas : {1, 7, 132}) {
    for (int tiles = 0; tiles < 700; ++tiles) {
      INFO(tiles << " tiles on " << ctas << " CTAs");
      const auto w2 = grouped_work(tiles, ctas);
      std::vector<int> whole(size_t(tiles), 0), half0(size_t(tiles), 0), half1(size_t(tiles), 0);
      bool in_range = true;
      for (int u = 0; u < w2.count; ++u) {
        const auto unit = grouped_unit(w2, u);
        if (unit.tile < 0 || unit.tile >= tiles) in_range = false;
        else if (unit.half < 0) ++whole[size_t(unit.tile)];
        else ++(unit.half == 0 ? half0 : half1)[size_t(unit.tile)];
      }
      REQUIRE(in_range);
      bool once = true;  // whole once, or each half once
      for (size_t t = 0; t < size_t(tiles); ++t)
        once = once && (whole[t] == 1 ? half0[t] + half1[t] == 0 : whole[t] == 0 && half0[t] == 1 && half1[t] == 1);
      REQUIRE(once);
      // The units after the whole waves make at most one wave: the split shortens the last wave.
      REQUIRE(w2.count - (w2.whole / ctas) * ctas <= ctas);
    }
  }
}

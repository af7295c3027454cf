// The cost model that chooses between the skinny GEMM (skinny_gemm.cu) and cuBLASLt for a
// decode-shaped product: estimated times from the bytes each moves and the rates measured on the
// H200. Pure logic: the kernel table's check (skinny_caps.cpp) asks it, so the dry-run prints both
// estimates. `--kernel` bypasses it and `--autotune` replaces it with timings.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gemm_view.hpp"
#include "skinny_plan.hpp"

namespace gexec::cuda {

// Rates (measured on the H200 unless marked as a lead; docs/design.md):
struct SkinnyRates {
  double copy_gbps = 4069;        // device-to-device copy bandwidth, read + write counted once (measured)
  // The FMA path ([K,N] weight): the fraction of copy_gbps it streams its weight at, and its f32
  // FMA rate in TFLOP/s. Measured by scripts/bench_decode.py on the H200 (f16, cold weights,
  // 2026-12-02) when [N,K] also ran on FMAs with the same staging and loads: 0.61 at M = 1, N = K =
  // 4096 (13.27 us against a floor of 8.12; 0.76 at 11008 x 4096, the lower one taken), and 7.1 to
  // 8.1 TFLOP/s at M = 16 and 128 (the shared-memory reads of the activations bound it).
  double skinny_bw_fraction = 0.61;
  double fma_tflops = 7.5;
  // The tensor-core path ([N,K] weight), fitted to gexec gemm --cold-l2 on the H200 (f16,
  // 2026-12-03; each pass's loads issued before its MMAs): a fixed 2.3 us, then its bytes at 0.87
  // of the copy bandwidth (11.70 us at 1 x 4096 x 4096, 27.62 at 1 x 11008 x 4096, 38.10 at 1 x
  // 16384 x 4096), and the activations that every column block reads again at 20 TB/s from L2
  // (12.60 and 13.35 us at M = 8 and 16 against 4096 x 4096). A warp waits one loaded memory
  // latency per pass of loads, in each wave of CTAs: 2.2 us, the longest seen (32 x 4096 x 4096,
  // one wave of 8 passes: 17.81 us; 32 x 11008 x 4096, three of 8: 45.10). The MMAs themselves
  // never bound it here (16 padded rows ran at 52 TFLOP/s or more, bound by the bytes); 300
  // TFLOP/s for mma.sync is a lead. Launched as a programmatic dependent (pdl.cuh) since, which
  // took 0.7 to 2.0 us off its times on an H100 (13.75 us at 1 x 4096 x 4096, 14.81 at 16 rows,
  // 33.10 at 1 x 11008 x 4096; cuBLASLt 15.86, 17.42, 35.14 in the same run): its fixed cost 1 us
  // less.
  double mma_fixed_us = 1.3;
  double mma_bw_fraction = 0.87;
  double mma_l2_gbps = 20000;
  double mma_pass_us = 2.2;
  double mma_tflops = 300;
  // The Hopper path (WGMMA fed by TMA, one launch, sm_90 at M >= 17): a fixed cost, its bytes at
  // a fraction of the copy bandwidth, and A read again from L2 by every column block. Fitted to
  // gexec gemm --cold-l2 on an H100 (f16, 2026-12-06; no H200 lent), the time against the weight's
  // bytes from 32 to 64 rows: 17.51 and 16.68 us at 4096 x 4096 (34 MB), 36.13 and 36.96 at 11008
  // x 4096 (90 MB), 51.28 and 51.95 at 16384 x 4096 (134 MB): 5.5 us, then 0.343 us a MB (0.72 of
  // the H200's copy rate, as the H100's times are read here against the H200's cuBLASLt); 19.38
  // at 128 x 4096 x 4096 (67 MB more of A from L2, at about 20 TB/s). A's rows past M cost
  // nothing: they are not read. Launched as a programmatic dependent since, and no longer zeroing
  // the rows past M: 15.52, 15.68 and 19.16 us at 32, 64 and 128 x 4096 x 4096 (cuBLASLt 15.37,
  // 15.60, 16.01 in the same run), 34.66 at 32 x 11008 x 4096 (36.33): a fixed cost 1 us less.
  double wg_fixed_us = 4.5;
  double wg_bw_fraction = 0.72;
  double wg_l2_gbps = 20000;
  double wg_tflops = 600;         // a lead: the product's padded rows on WGMMA never bound it here
  double l2_gbps = 10000;         // the FMA path's weight re-read from L2 by each further row tile (a lead)
  double launch_us = 2.0;         // one more launch in a replayed graph (the split-K sum; a lead)
  // cuBLASLt's product with the bias and SiLU added by a kernel after it (cuBLASLt has no SiLU
  // epilogue), against the bias in its epilogue, at 1, 16 and 128 x 11008 x 4096 (f16, cold
  // weights, on an H100, 2026-12-05; the H200 did not run it): 5.3, 5.7 and 11.3 us more with the
  // general elementwise kernel (scripts/bench_decode.py --quick), 4.5, 0.5 and 5.6 with the
  // row-wise one (ew_bias_rows; gexec gemm --cold-l2). Not a fixed cost; 4 us keeps the choices
  // the measurements support: the skinny kernel at 1 x 11008 x 4096 (34.9 against 41.5 us), and
  // cuBLASLt at 32 x 4096 x 4096, where with the bias alone it was 3 us faster on the H200.
  double tail_us = 4.0;
  double tensor_tflops = 650;     // cuBLASLt's dense f16 rate (measured: 650-690 sustained)
};

struct SkinnyCost {
  double skinny_us = 0, cublaslt_us = 0, floor_us = 0;
  double weight_bytes = 0;
  // The skinny kernel must win by this much on the model's figures: where the model is unsure,
  // cuBLASLt stays (gexec is never slower than cuBLASLt because of this kernel).
  static constexpr double kMargin = 0.95;
  // Below this weight both kernels are bound by their launch, not by bandwidth, and the model's
  // byte counts say nothing: cuBLASLt stays.
  static constexpr double kMinWeightBytes = 8.0 * (1 << 20);
  bool skinny_wins() const { return weight_bytes >= kMinWeightBytes && skinny_us <= kMargin * cublaslt_us; }
  std::string describe() const {
    char buf[200];
    if (weight_bytes < kMinWeightBytes) {
      std::snprintf(buf, sizeof buf, "cost model: a weight of %.0f KiB (below 8 MiB) is read in less than a launch takes",
                    weight_bytes / 1024);
      return buf;
    }
    std::snprintf(buf, sizeof buf, "cost model: skinny %.1f us, cuBLASLt %.1f us, floor %.1f us (weight at copy bandwidth)",
                  skinny_us, cublaslt_us, floor_us);
    return buf;
  }
};

// The bytes from memory, in order: the weight, the activations, the output, bias and residual.
inline double skinny_dram_bytes(const SkinnyPlan& p) {
  const GemmShape& s = p.shape;
  const double e = 2;  // f16 / bf16 operands
  double bytes = double(s.n) * double(s.k) * e + double(s.m) * double(s.k) * e +
                 double(s.m) * double(s.n) * (p.c == DType::f32 ? 4 : 2);
  if (s.has_bias) bytes += double(s.n) * (p.bias == DType::f32 ? 4 : 2);
  if (s.has_residual) bytes += double(s.m) * double(s.n) * (p.res == DType::f32 ? 4 : 2);
  return bytes;
}

inline SkinnyCost skinny_cost(const SkinnyPlan& p, int sm_count, const SkinnyRates& r = {}) {
  const GemmShape& s = p.shape;
  const double sms = sm_count > 0 ? sm_count : 132;
  const double weight = double(s.n) * double(s.k) * 2;
  const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
  SkinnyCost c;
  c.weight_bytes = weight;
  c.floor_us = weight / (r.copy_gbps * 1e3);
  // The skinny kernel: the slowest of streaming its bytes (plus the split-K partial sums written and
  // read back), its arithmetic, (FMA path) the weight read again from L2 by each further row tile,
  // and (MMA path) a warp's passes of loads; one more launch when split.
  const double traffic = skinny_dram_bytes(p) + 2.0 * double(p.workspace_bytes());
  double mem, math, l2 = 0, latency = 0;
  if (p.wgmma) {
    const double reread = double(p.col_blocks) * double(s.m) * double(s.k) * 2;
    mem = r.wg_fixed_us + traffic / (r.copy_gbps * r.wg_bw_fraction * 1e3) + reread / (r.wg_l2_gbps * 1e3);
    math = 2.0 * double(p.row_tile) * double(s.n) * double(s.k) / (r.wg_tflops * 1e6);
  } else if (p.mma) {
    // Its bytes and the activations' reads from L2 add up; a warp's passes of loads, each one
    // memory latency, and the arithmetic bound it from below.
    const double reread = double(p.col_blocks) * double(s.m) * double(s.k) * 2 + double(p.row_tiles - 1) * weight;
    mem = r.mma_fixed_us + traffic / (r.copy_gbps * r.mma_bw_fraction * 1e3) + reread / (r.mma_l2_gbps * 1e3);
    const int m_tiles = p.row_tile / SkinnyGeometry::kMmaRows;
    const double chunks = std::ceil(double(p.split_k) / SkinnyGeometry::kMmaChunk / (SkinnyGeometry::kWarps / p.mma_warps_n));
    const double passes = std::ceil(chunks / SkinnyGeometry::mma_unroll(m_tiles));
    const double waves = std::ceil(double(p.ctas()) / (sms * SkinnyGeometry::kMmaCtasPerSm));
    latency = waves * passes * r.mma_pass_us;
    math = 2.0 * double(p.row_tiles * p.row_tile) * double(s.n) * double(s.k) / (r.mma_tflops * 1e6);
  } else {
    mem = traffic / (r.copy_gbps * r.skinny_bw_fraction * 1e3);
    math = flops / (r.fma_tflops * 1e6);
    l2 = double(p.row_tiles - 1) * weight / (r.l2_gbps * 1e3);
  }
  c.skinny_us = std::max({mem, math, l2, latency}) + (p.workspace_bytes() > 0 && !p.wgmma ? r.launch_us : 0);
  // cuBLASLt: the time PyTorch's addmm (cuBLAS) took on the H200 with cold weights (docs/design.md),
  // fitted by the share of the SMs its work occupies, taken as 128-column tiles, split along K
  // once per 4096: N = 4096, K = 4096 gives 32 tiles and reached 0.62 of the copy bandwidth
  // (time / floor 1.40 to 1.68 at M = 1 to 128), K = 11008 0.80 (1.25 at M = 16), N = 11008 0.86,
  // N = 14336 0.93, N = 16384 1.0, as efficiency = 0.5 + 0.5 * min(1, tiles / SMs). Bounded below
  // by its tensor-core rate. A lead for other shapes: --autotune measures both.
  const double tiles = double(s.n) / 128.0 * std::max(1.0, double(s.k) / 4096.0);
  const double fill = std::min(1.0, tiles / sms);
  const double lt_eff = 0.5 + 0.5 * fill;
  c.cublaslt_us = std::max(skinny_dram_bytes(p) / (r.copy_gbps * lt_eff * 1e3), flops / (r.tensor_tflops * 1e6));
  // SiLU and the erf GELU, which cuBLASLt has no epilogue for: one more kernel reads C and writes it back.
  if (!lt_has_epilogue(p.act)) c.cublaslt_us += r.tail_us + 2.0 * double(s.m) * double(s.n) * (p.c == DType::f32 ? 4 : 2) / (r.copy_gbps * 1e3);
  return c;
}

}  // namespace gexec::cuda

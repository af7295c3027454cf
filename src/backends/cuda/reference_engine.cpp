// The float64 reference engine on a CUDA device (verify/product_engine.hpp): the operands widened
// to double on the device (reference_widen.cu), their products summed by cuBLASLt in FP64
// (CUBLAS_COMPUTE_64F), the sums copied back for the host's reference to finish: whole, or panel by
// panel of C (stream(): the host finishes and compares one panel while the device sums the next).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gexec/backends/cuda_device.hpp"
#include "gexec/verify/product_engine.hpp"
#include "gexec/ir/zeros.hpp"
#include "raii.hpp"
#include "reference_widen.hpp"
#include "staged_copy.hpp"

namespace gexec {
namespace cuda {
namespace {

// Left free beside the engine's buffers: cuBLASLt's own allocations, the context's growth.
constexpr int64_t kMarginBytes = int64_t(256) << 20;

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
  return buf;
}

// Which device arrays a kind of product needs beside each operand's values and magnitudes.
struct Arrays {
  bool sq_a = false, c_a = false;          // a^2; A's carried variance
  bool sq_b = false, c_b = false, p_b = false;  // b^2; B's carried variance; b^2 + cb
  int outs = 2;                            // per element of C: value, scale, and the others
  explicit Arrays(const ProductKind& k) {
    c_a = k.carried && k.carried_a;
    c_b = k.carried && k.carried_b;
    sq_a = k.squares || c_b;  // a^2 cb
    sq_b = k.squares;
    p_b = c_a;                // ca (b^2 + cb)
    outs = 2 + int(k.carried) + int(k.squares) + (k.block > 0 ? 2 : 0);
  }
  int per_a() const { return 2 + int(sq_a) + int(c_a); }
  int per_b() const { return 2 + int(sq_b) + int(c_b) + int(p_b); }
};

// The product as the engine walks it: batch entries, each `rows` rows of op(A). A batch with a
// shared B and an untransposed A is one entry of batch * m rows (its entries lie one after another).
struct Walk {
  int64_t entries = 1, rows = 0;
  explicit Walk(const GemmShape& s) {
    const bool fold = !s.b_batched && !s.trans_a;
    entries = fold ? 1 : s.batch;
    rows = fold ? s.batch * s.m : s.m;
  }
};

int64_t numel_a(const GemmShape& s) { return s.batch * s.m * s.k; }
int64_t numel_b(const GemmShape& s) { return (s.b_batched ? s.batch : 1) * s.k * s.n; }

// The stored bytes of an operand (at most 4 per element) and its f8 scales, uploaded before widening.
int64_t stage_bytes(const GemmShape& s) {
  return 4 * std::max(numel_a(s), numel_b(s)) + 8 * (std::max(s.m, s.k) + std::max(s.k, s.n) + 2) + 256;
}

class CudaProductEngine final : public ProductEngine {
 public:
  static Result<std::unique_ptr<ProductEngine>> open(int ordinal, int64_t panel_bytes) {
    std::unique_ptr<CudaProductEngine> e(new CudaProductEngine());
    e->ordinal_ = ordinal;
    e->panel_bytes_ = panel_bytes;
    GEXEC_CUDA_TRY(cudaSetDevice(ordinal));
    cudaDeviceProp prop{};
    GEXEC_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
    e->name_ = "CUDA device " + std::to_string(ordinal) + " (" + prop.name + ")";
    auto stream = make_stream();
    if (!stream) return stream.error();
    e->stream_ = std::move(*stream);
    auto lt = make_lt_handle();
    if (!lt) return lt.error();
    e->lt_ = std::move(*lt);
    return std::unique_ptr<ProductEngine>(std::move(e));
  }

  ~CudaProductEngine() override { release(); }

  std::string name() const override { return name_; }

  std::string phases() const override { return phases_; }

  void set_resident(std::map<std::string, const void*> inputs) override { resident_ = std::move(inputs); }

  std::string refusal(const ProductKind& kind) const override {
    int64_t rows = 0;
    return plan(kind, rows);
  }

  std::string prepare(const ProductKind& kind, int64_t want = 0) override {
    release();
    int64_t rows = 0;
    if (std::string why = plan(kind, rows); !why.empty()) return why;
    // Streamed panels are of the rows asked for, or not at all: their size is the caller's.
    if (want > 0) {
      const int64_t asked = std::min(want, Walk(kind.shape).rows);
      if (rows < asked)
        return "panels of " + std::to_string(asked) + " rows of C need more device memory than is free (" +
               std::to_string(rows) + " rows fit)";
      rows = asked;
    }
    const GemmShape& s = kind.shape;
    const Arrays need(kind);
    const int64_t fixed = 8 * (need.per_a() * numel_a(s) + need.per_b() * numel_b(s)) + stage_bytes(s);
    const int64_t per_row = 8 * need.outs * s.n;
    panel_rows_ = rows;
    kind_ = kind;
    // Everything at once, released together: a failure leaves nothing allocated.
    auto alloc = [&](DeviceMemory& m, int64_t bytes, bool wanted) -> std::string {
      if (!wanted) return {};
      auto r = DeviceMemory::allocate(size_t(bytes));
      if (!r) return r.error().message;
      m = std::move(*r);
      return {};
    };
    const int64_t na = 8 * numel_a(s), nb = 8 * numel_b(s), panel = 8 * rows * s.n;
    using Buffer = std::tuple<DeviceMemory*, int64_t, bool>;
    const Buffer buffers[] = {{&a_.x, na, true},       {&a_.ax, na, true},      {&a_.sq, na, need.sq_a},
                              {&a_.c, na, need.c_a},   {&b_.x, nb, true},       {&b_.ax, nb, true},
                              {&b_.sq, nb, need.sq_b}, {&b_.c, nb, need.c_b},   {&b_.p, nb, need.p_b},
                              {&stage_, stage_bytes(s), true}};
    for (const auto& [m, bytes, wanted] : buffers) {
      if (std::string why = alloc(*m, bytes, wanted); !why.empty()) {
        release();
        return "allocating its " + gib(fixed + per_row * rows) + " of device memory failed: " + why;
      }
    }
    outs_.resize(size_t(need.outs));
    for (DeviceMemory& o : outs_)
      if (std::string why = alloc(o, panel, true); !why.empty()) {
        release();
        return "allocating its " + gib(fixed + per_row * rows) + " of device memory failed: " + why;
      }
    prepared_ = true;
    return {};
  }

  Result<ProductSums> sums(const ProductJob& job, const EngineProgress& progress) override {
    if (!prepared_ || !same_kind(job.kind))
      if (std::string why = prepare(job.kind); !why.empty()) return runtime_error(why);
    auto r = run(job, progress);
    release();  // the memory goes back for the rest of the run
    return r;
  }

  Status stream(const ProductJob& job, int64_t rows, const EngineProgress& progress, const PanelFn& fn) override {
    const Walk walk(job.kind.shape);
    // Panels within one batch entry only: several entries are summed whole.
    if (walk.entries != 1 || walk.rows < 1) return ProductEngine::stream(job, rows, progress, fn);
    rows = std::clamp<int64_t>(rows, 1, walk.rows);
    if (!prepared_ || !same_kind(job.kind) || panel_rows_ != rows)
      if (std::string why = prepare(job.kind, rows); !why.empty()) return runtime_error(why);
    const Status st = stream_panels(job, progress, fn);
    // Stopped early (fn's error), the next panel's products may still run: done before the
    // memory goes back.
    (void)cudaStreamSynchronize(stream_.get());
    release();
    return st;
  }

 private:
  CudaProductEngine() = default;

  // One operand's arrays: value, magnitude, square, carried variance, square + carried.
  struct Side {
    DeviceMemory x, ax, sq, c, p;
    void reset() { x.reset(), ax.reset(), sq.reset(), c.reset(), p.reset(); }
  };

  // The rows of C per panel that fit in the device's free memory now, or why none do.
  std::string plan(const ProductKind& kind, int64_t& rows) const {
    if (const cudaError_t e = cudaSetDevice(ordinal_); e != cudaSuccess) {
      (void)cudaGetLastError();
      return std::string("cudaSetDevice failed: ") + cudaGetErrorName(e);
    }
    const GemmShape& s = kind.shape;
    const Arrays need(kind);
    const Walk walk(s);
    const int64_t fixed = 8 * (need.per_a() * numel_a(s) + need.per_b() * numel_b(s)) + stage_bytes(s);
    const int64_t per_row = 8 * need.outs * s.n;
    size_t free_b = 0, total_b = 0;
    if (const cudaError_t e = cudaMemGetInfo(&free_b, &total_b); e != cudaSuccess) {
      (void)cudaGetLastError();
      return std::string("cudaMemGetInfo failed: ") + cudaGetErrorName(e);
    }
    const int64_t room = int64_t(free_b) - kMarginBytes - fixed;
    rows = per_row > 0 ? std::min(walk.rows, room / per_row) : walk.rows;
    if (panel_bytes_ > 0 && per_row > 0) rows = std::min(rows, std::max<int64_t>(1, panel_bytes_ / per_row));
    if (rows < 1 || room < 0)
      return "the float64 reference needs " + gib(fixed + per_row) + " of device memory (" + gib(fixed) +
             " for the operands, " + gib(per_row) + " per row of C) and " + gib(kMarginBytes) + " to spare; " +
             name_ + " has " + gib(int64_t(free_b)) + " free of " + gib(int64_t(total_b));
    return {};
  }

  bool same_kind(const ProductKind& k) const {
    const GemmShape &a = k.shape, &b = kind_.shape;
    return a.batch == b.batch && a.m == b.m && a.n == b.n && a.k == b.k && a.b_batched == b.b_batched &&
           a.trans_a == b.trans_a && a.trans_b == b.trans_b && k.carried == kind_.carried &&
           k.carried_a == kind_.carried_a && k.carried_b == kind_.carried_b && k.squares == kind_.squares &&
           k.block == kind_.block;
  }

  void release() {
    a_.reset(), b_.reset(), stage_.reset();
    outs_.clear();
    prepared_ = false;
  }

  // Values, magnitudes and squares of an operand on the device, from its stored bytes or from
  // the values (and carried variances) an op produced; p = x^2 + carried where asked for.
  Status widen(const ProductOperand& o, Side& side, bool sq, bool c, bool p) {
    const Tensor& t = *o.tensor;
    const int64_t n = t.numel();
    cudaStream_t st = stream_.get();
    if (o.bytes) {
      // A graph input the run left on this device is read there: no copy back up.
      const auto there = resident_.find(t.name);
      const bool resident = there != resident_.end();
      in_place_ += int(resident);
      F8Side src;
      src.data = resident ? const_cast<void*>(there->second) : stage_.get();  // only read
      src.dtype = int(t.dtype);
      src.cols = t.shape.empty() ? 1 : std::max<int64_t>(t.shape.back(), 1);
      src.rows = n / src.cols;
      src.colmajor = t.rank() == 2 && t.layout == Layout::colmajor;
      const int64_t stored = int64_t(o.bytes->size());
      if (!resident) GEXEC_TRY(staged_.to_device(stage_.get(), o.bytes->data(), size_t(stored), st));
      if (is_f8(t.dtype)) {
        // The scales after the bytes, 8-byte aligned.
        char* at = static_cast<char*>(stage_.get()) + (stored + 15) / 16 * 16;
        src.axis = t.scale.axis;
        src.scale = reinterpret_cast<const double*>(at);
        GEXEC_CUDA_TRY(cudaMemcpyAsync(at, t.scale.values.data(), t.scale.values.size() * sizeof(double),
                                       cudaMemcpyHostToDevice, st));
      }
      GEXEC_TRY(launch_widen(src, n, as(side.x), as(side.ax), sq ? as(side.sq) : nullptr, st));
      // Synchronised before the stage is reused by the next operand.
      GEXEC_CUDA_TRY(cudaStreamSynchronize(st));
    } else {
      GEXEC_TRY(staged_.to_device(side.x.get(), o.value->data(), size_t(n) * 8, st));
      GEXEC_TRY(launch_derive(as(side.x), nullptr, n, as(side.ax), sq ? as(side.sq) : nullptr, nullptr, st));
    }
    if (c)
      GEXEC_TRY(staged_.to_device(side.c.get(), o.carried->data(), size_t(n) * 8, st));
    if (p) GEXEC_TRY(launch_derive(as(side.x), c ? as(side.c) : nullptr, n, nullptr, nullptr, as(side.p), st));
    return {};
  }

  static double* as(const DeviceMemory& m) { return static_cast<double*>(m.get()); }

  // C (rows x n, row-major) = alpha op(A)[r0 : r0 + rows, k0 : k0 + kb] op(B)[k0 : k0 + kb, :] + beta C,
  // `a` and `b` the batch entry's logical (row-major) matrices, of `a_rows` rows of op(A). In
  // cuBLASLt's column-major terms: C^T (n x rows) = op(B)^T op(A)^T.
  Status gemm(const GemmShape& s, const double* a, int64_t a_rows, const double* b, double* c, int64_t rows,
              int64_t r0, int64_t k0, int64_t kb, double alpha, double beta) {
    auto desc = make_matmul_desc(CUBLAS_COMPUTE_64F, CUDA_R_64F);
    if (!desc) return desc.error();
    const cublasOperation_t ta = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(ta)));
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(tb)));
    // B stored [k, n] (column-major [n, k], ld n) or, transposed, [n, k] (column-major [k, n], ld k).
    const double* bp = s.trans_b ? b + k0 : b + k0 * s.n;
    auto lb = s.trans_b ? make_matrix_layout(CUDA_R_64F, uint64_t(kb), uint64_t(s.n), s.k)
                        : make_matrix_layout(CUDA_R_64F, uint64_t(s.n), uint64_t(kb), s.n);
    // A stored [a_rows, k] (column-major [k, a_rows], ld k) or, transposed, [k, a_rows] (ld a_rows).
    const double* ap = s.trans_a ? a + r0 + k0 * a_rows : a + r0 * s.k + k0;
    auto la = s.trans_a ? make_matrix_layout(CUDA_R_64F, uint64_t(rows), uint64_t(kb), a_rows)
                        : make_matrix_layout(CUDA_R_64F, uint64_t(kb), uint64_t(rows), s.k);
    auto lc = make_matrix_layout(CUDA_R_64F, uint64_t(s.n), uint64_t(rows), s.n);
    if (!lb) return lb.error();
    if (!la) return la.error();
    if (!lc) return lc.error();
    GEXEC_CUBLAS_TRY(cublasLtMatmul(lt_.get(), desc->get(), &alpha, bp, lb->get(), ap, la->get(), &beta, c,
                                    lc->get(), c, lc->get(), nullptr, nullptr, 0, stream_.get()));
    return {};
  }

  // The arrays of `sums` in the order of outs_: value, scale, then those the kind asks for.
  static std::vector<std::vector<double>*> panel_arrays(const ProductKind& kind, ProductSums& sums) {
    std::vector<std::vector<double>*> dst = {&sums.value, &sums.scale};
    if (kind.carried) dst.push_back(&sums.var);
    if (kind.squares) dst.push_back(&sums.squares);
    if (kind.block > 0) dst.push_back(&sums.block_sq);
    return dst;
  }

  // The products of rows [r0, r0 + rows) of op(A) in batch entry e into outs_, enqueued on the
  // stream (panel_arrays says which array is which).
  Status enqueue_panel(const ProductJob& job, int64_t e, int64_t r0, int64_t rows) {
    const GemmShape& s = job.kind.shape;
    const Arrays need(job.kind);
    const Walk walk(s);
    const double a2 = s.alpha * s.alpha;
    const int64_t a_entry = walk.rows * s.k, b_entry = s.b_batched ? s.k * s.n : 0;
    const auto A = [&](const DeviceMemory& m) { return as(m) + e * a_entry; };
    const auto B = [&](const DeviceMemory& m) { return as(m) + e * b_entry; };
    auto product = [&](const DeviceMemory& a, const DeviceMemory& b, size_t o, double alpha, double beta) {
      return gemm(s, A(a), walk.rows, B(b), as(outs_[o]), rows, r0, 0, s.k, alpha, beta);
    };
    size_t o = 0;
    GEXEC_TRY(product(a_.x, b_.x, o++, s.alpha, 0.0));
    GEXEC_TRY(product(a_.ax, b_.ax, o++, std::fabs(s.alpha), 0.0));
    if (job.kind.carried) {
      if (need.c_a) GEXEC_TRY(product(a_.c, b_.p, o, a2, 0.0));
      if (need.c_b) GEXEC_TRY(product(a_.sq, b_.c, o, std::fabs(a2), need.c_a ? 1.0 : 0.0));
      if (!need.c_a && !need.c_b)
        GEXEC_CUDA_TRY(cudaMemsetAsync(outs_[o].get(), 0, size_t(rows * s.n) * 8, stream_.get()));
      ++o;
    }
    if (job.kind.squares) GEXEC_TRY(product(a_.sq, b_.sq, o++, a2, 0.0));
    if (job.kind.block > 0) {
      // Each block's magnitudes into a scratch panel, squared into the total.
      for (int64_t k0 = 0; k0 < s.k; k0 += job.kind.block) {
        const int64_t kb = std::min(job.kind.block, s.k - k0);
        GEXEC_TRY(gemm(s, A(a_.ax), walk.rows, B(b_.ax), as(outs_[o + 1]), rows, r0, k0, kb, 1.0, 0.0));
        GEXEC_TRY(launch_square_add(as(outs_[o + 1]), as(outs_[o]), rows * s.n, k0 == 0, stream_.get()));
      }
    }
    return {};
  }

  // stream(): the operands widened once, then per panel its products, copied back into host
  // arrays of one panel (reused), the next panel's products enqueued before fn works on these.
  Status stream_panels(const ProductJob& job, const EngineProgress& progress, const PanelFn& fn) {
    GEXEC_CUDA_TRY(cudaSetDevice(ordinal_));
    const GemmShape& s = job.kind.shape;
    const Arrays need(job.kind);
    const Walk walk(s);
    cudaStream_t st = stream_.get();
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
    auto t = Clock::now();
    in_place_ = 0;
    GEXEC_TRY(widen(job.a, a_, need.sq_a, need.c_a, false));
    GEXEC_TRY(widen(job.b, b_, need.sq_b, need.c_b, need.p_b));
    GEXEC_CUDA_TRY(cudaStreamSynchronize(st));
    const double t_operands = since(t);
    ProductSums host;
    const std::vector<std::vector<double>*> dst = panel_arrays(job.kind, host);
    try {
      for (std::vector<double>* d : dst) assign_zeros(*d, size_t(panel_rows_ * s.n));
    } catch (const std::bad_alloc&) {
      return runtime_error("out of host memory for the float64 reference's panels of " +
                           std::to_string(panel_rows_ * s.n) + " doubles");
    }
    double t_copies = 0, t_host = 0;
    const int64_t panels = (walk.rows + panel_rows_ - 1) / panel_rows_;
    GEXEC_TRY(enqueue_panel(job, 0, 0, std::min(panel_rows_, walk.rows)));
    for (int64_t r0 = 0, p = 0; r0 < walk.rows; r0 += panel_rows_, ++p) {
      const int64_t rows = std::min(panel_rows_, walk.rows - r0);
      t = Clock::now();
      for (size_t d = 0; d < dst.size(); ++d) {
        dst[d]->resize(size_t(rows * s.n));  // the last panel shorter: no reallocation
        GEXEC_TRY(staged_.to_host(dst[d]->data(), outs_[d].get(), size_t(rows * s.n) * 8, st));
      }
      t_copies += since(t);
      // The device sums the next panel while the host works on this one.
      if (r0 + rows < walk.rows) GEXEC_TRY(enqueue_panel(job, 0, r0 + rows, std::min(panel_rows_, walk.rows - r0 - rows)));
      t = Clock::now();
      GEXEC_TRY(fn(r0, rows, host));
      t_host += since(t);
      if (progress) progress(double(p + 1) / double(panels));
    }
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "operands %.1f ms (%d of 2 read where the run left them), %lld panels of %lld rows: products "
                  "and copies back %.1f ms, the host's work on them %.1f ms beside the next panel's products",
                  t_operands, in_place_, static_cast<long long>(panels), static_cast<long long>(panel_rows_), t_copies,
                  t_host);
    phases_ = buf;
    return {};
  }

  Result<ProductSums> run(const ProductJob& job, const EngineProgress& progress) {
    GEXEC_CUDA_TRY(cudaSetDevice(ordinal_));
    const GemmShape& s = job.kind.shape;
    const Arrays need(job.kind);
    const Walk walk(s);
    cudaStream_t st = stream_.get();
    // The time of each phase, for -v: the operands up and widened, the host's arrays (beside
    // them), the products, the copies back (each panel's products and copies are timed apart).
    using Clock = std::chrono::steady_clock;
    double t_operands = 0, t_arrays = 0, t_products = 0, t_copies = 0;
    auto since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
    const int64_t count = s.batch * s.m * s.n;
    ProductSums out;
    // The host's arrays are zero-filled on another thread while the device widens and multiplies:
    // their first touch (two 512 MiB arrays at 8192^2: ~0.2 s) took as long as the device's work.
    bool arrays_failed = false;
    std::jthread arrays([&] {  // joined before the first copy back, and on every way out
      const auto t = Clock::now();
      try {
        assign_zeros(out.value, size_t(count));
        assign_zeros(out.scale, size_t(count));
        if (job.kind.carried) assign_zeros(out.var, size_t(count));
        if (job.kind.squares) assign_zeros(out.squares, size_t(count));
        if (job.kind.block > 0) assign_zeros(out.block_sq, size_t(count));
      } catch (const std::bad_alloc&) {
        arrays_failed = true;
      }
      t_arrays = since(t);
    });
    auto t = Clock::now();
    in_place_ = 0;
    GEXEC_TRY(widen(job.a, a_, need.sq_a, need.c_a, false));
    GEXEC_TRY(widen(job.b, b_, need.sq_b, need.c_b, need.p_b));
    GEXEC_CUDA_TRY(cudaStreamSynchronize(st));
    t_operands = since(t);

    const int64_t panels = walk.entries * ((walk.rows + panel_rows_ - 1) / panel_rows_);
    const std::vector<std::vector<double>*> dst = panel_arrays(job.kind, out);
    int64_t done = 0;
    for (int64_t e = 0; e < walk.entries; ++e) {
      for (int64_t r0 = 0; r0 < walk.rows; r0 += panel_rows_) {
        const int64_t rows = std::min(panel_rows_, walk.rows - r0);
        t = Clock::now();
        GEXEC_TRY(enqueue_panel(job, e, r0, rows));
        GEXEC_CUDA_TRY(cudaStreamSynchronize(st));
        t_products += since(t);
        if (arrays.joinable()) arrays.join();
        if (arrays_failed)
          return runtime_error("out of host memory for the float64 reference's " + std::to_string(need.outs) + " arrays of " +
                               std::to_string(count) + " doubles");
        t = Clock::now();
        // This panel's rows of C: row r0 of entry e is row e * rows + r0 of the whole.
        const int64_t at = (e * walk.rows + r0) * s.n;
        for (size_t d = 0; d < dst.size(); ++d)
          GEXEC_TRY(staged_.to_host(dst[d]->data() + at, outs_[d].get(), size_t(rows * s.n) * 8, st));
        t_copies += since(t);
        if (progress) progress(double(++done) / double(panels));
      }
    }
    if (arrays.joinable()) arrays.join();  // (joined at the first panel: there is always one)
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "operands %.1f ms (%d of 2 read where the run left them), host arrays %.1f ms beside them, "
                  "products %.1f ms, copies back %.1f ms",
                  t_operands, in_place_, t_arrays, t_products, t_copies);
    phases_ = buf;
    return out;
  }

  int ordinal_ = 0;
  int64_t panel_bytes_ = 0;  // > 0: panels of C at most this large (tests)
  std::string name_;
  ProductKind kind_;
  int64_t panel_rows_ = 0;
  bool prepared_ = false;
  std::string phases_;  // of the last run
  std::map<std::string, const void*> resident_;  // graph inputs on this device (set_resident)
  int in_place_ = 0;    // operands of the last run read from resident_
  StagedCopy staged_;   // the operands up, the sums back
  // Declared before the stream and handle, so destroyed after them: memory outlives its users.
  Side a_, b_;
  DeviceMemory stage_;
  std::vector<DeviceMemory> outs_;  // per element of a panel of C: value, scale, then the others
  Stream stream_;
  LtHandle lt_;
};

}  // namespace
}  // namespace cuda

Result<std::unique_ptr<ProductEngine>> open_cuda_product_engine(int ordinal, int64_t panel_bytes) {
  return cuda::CudaProductEngine::open(ordinal, panel_bytes);
}

}  // namespace gexec

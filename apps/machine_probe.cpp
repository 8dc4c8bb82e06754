#include "apps/machine_probe.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <xsimd/xsimd.hpp>

#include "engine/error/error.hpp"
#include "engine/timing/elapsed.hpp"
#include "kernels/cache_line.hpp"

namespace kiln {

namespace {

using Clock = std::chrono::steady_clock;
using FloatVec = xsimd::batch<float>;


std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// Sums a buffer far larger than the caches with `threads` threads, each
// reading its share as `streams` interleaved sequential streams (a matmul
// reads several weight rows at once, which some machines serve faster than
// one stream), each stream asked for `ahead` bytes ahead into L2 as the
// kernels ask for weights (0: the hardware prefetcher alone); best of
// several passes, in GB/s.
double read_bandwidth(const float* data, size_t n, int threads, int streams, size_t ahead) {
  double best = 0;
  volatile float sink = 0;
  constexpr size_t kStep = 4 * FloatVec::size;
  for (int pass = 0; pass < 3; ++pass) {
    const auto t0 = Clock::now();
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      FloatVec a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
      const size_t share = n / static_cast<size_t>(omp_get_num_threads()) / kStep / streams * kStep * streams;
      const float* mine = data + share * static_cast<size_t>(omp_get_thread_num());
      const size_t stream_len = share / streams;
      for (size_t i = 0; i < stream_len; i += kStep)
        for (int s = 0; s < streams; ++s) {
          const float* p = mine + s * stream_len + i;
          if (ahead != 0) kernels::prefetch_lines_to_l2(reinterpret_cast<const char*>(p) + ahead, kStep * sizeof(float));
          a0 += FloatVec::load_aligned(p);
          a1 += FloatVec::load_aligned(p + FloatVec::size);
          a2 += FloatVec::load_aligned(p + 2 * FloatVec::size);
          a3 += FloatVec::load_aligned(p + 3 * FloatVec::size);
        }
      total += xsimd::hadd(a0 + a1 + a2 + a3);
    }
    sink = total;
    const size_t read = n / static_cast<size_t>(threads) / kStep / streams * kStep * streams * threads;
    best = std::max(best, double(read) * sizeof(float) / seconds_since(t0) / 1e9);
  }
  (void)sink;
  return best;
}

// The best of one and of several streams per thread, each without a
// software prefetch and with one a short and a long distance ahead: the
// kernels ask for weights ahead, and on some machines read faster than the
// hardware prefetcher alone lets a loop read (docs/benchmarks.md, "the probe
// asks for lines ahead too").
double read_bandwidth(const float* data, size_t n, int threads) {
  double best = 0;
  for (int streams : {1, 4, 8})
    for (size_t ahead : {size_t(0), size_t(2048), size_t(65536)})
      best = std::max(best, read_bandwidth(data, n, threads, streams, ahead));
  return best;
}

// Peak rates of one core, measured with the instructions this build's kernels
// are built on: twelve independent instances of one instruction per step of
// a counted loop, all in one assembly block, so the compiler can neither
// hoist, drop nor spill them (xsimd loops were moved out of the timed span or
// cut short by the optimiser). Registers 14 and 15 are the inputs, 0..11 the
// accumulators; all are zeroed first (garbage could be denormal, which some
// cores run slowly). The int8 kernels widen vpmaddubsw's 16-bit sums once per
// several products, so that widening is not counted against the peak.
#define KILN_PROBE_12(op) op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7) op(8) op(9) op(10) op(11)
#if defined(__x86_64__)
#define KILN_PROBE_ZERO(n) "vpxor %%xmm" #n ", %%xmm" #n ", %%xmm" #n "\n"
#define KILN_PROBE_LOOP_END "dec %0\njnz 1b\n"
#define KILN_PROBE_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
                            "xmm11", "xmm14", "xmm15", "cc"
#elif defined(__aarch64__)
#define KILN_PROBE_ZERO(n) "movi v" #n ".16b, #0\n"
#define KILN_PROBE_LOOP_END "subs %0, %0, #1\nb.ne 1b\n"
#define KILN_PROBE_CLOBBERS "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v14", "v15", "cc"
#endif

#if defined(__AVX512F__)
#define KILN_PROBE_FMA(n) "vfmadd231ps %%zmm14, %%zmm15, %%zmm" #n "\n"
constexpr int kProbeFmaLanes = 16;
constexpr const char* kProbeFmaMethod = "vfmadd231ps zmm (AVX-512)";
#elif defined(__AVX2__) && defined(__FMA__)
#define KILN_PROBE_FMA(n) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #n "\n"
constexpr int kProbeFmaLanes = 8;
constexpr const char* kProbeFmaMethod = "vfmadd231ps ymm (FMA)";
#elif defined(__aarch64__)
#define KILN_PROBE_FMA(n) "fmla v" #n ".4s, v14.4s, v15.4s\n"
constexpr int kProbeFmaLanes = 4;
constexpr const char* kProbeFmaMethod = "fmla (NEON)";
#endif

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define KILN_PROBE_INT8(n) "vpdpbusd %%zmm14, %%zmm15, %%zmm" #n "\n"
constexpr int kProbeInt8Bytes = 64;
constexpr const char* kProbeInt8Method = "vpdpbusd zmm (AVX-512 VNNI)";
#elif defined(__AVX2__)
#define KILN_PROBE_INT8(n) "vpmaddubsw %%ymm14, %%ymm15, %%ymm" #n "\n"
constexpr int kProbeInt8Bytes = 32;
constexpr const char* kProbeInt8Method = "vpmaddubsw (AVX2)";
#elif defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#define KILN_PROBE_INT8(n) "sdot v" #n ".4s, v14.16b, v15.16b\n"
constexpr int kProbeInt8Bytes = 16;
constexpr const char* kProbeInt8Method = "sdot (NEON dot product)";
#endif

constexpr long kProbeSteps = 20'000'000;

// Seconds for kProbeSteps steps of twelve `op`s.
#define KILN_PROBE_TIME(op)                                                                                      \
  [] {                                                                                                           \
    long steps = kProbeSteps;                                                                                    \
    const auto t0 = Clock::now();                                                                                \
    __asm__ volatile(KILN_PROBE_12(KILN_PROBE_ZERO) KILN_PROBE_ZERO(14) KILN_PROBE_ZERO(15) "1:\n" KILN_PROBE_12(op) \
                         KILN_PROBE_LOOP_END                                                                     \
                     : "+r"(steps)                                                                               \
                     :                                                                                           \
                     : KILN_PROBE_CLOBBERS);                                                                     \
    return seconds_since(t0);                                                                                    \
  }()

// FP32 multiply-adds (x2 flops) of one core; 0 where the build has no FMA.
double fp32_fma_gflops(std::string& method) {
#if defined(KILN_PROBE_FMA)
  method = kProbeFmaMethod;
  return double(kProbeSteps) * 12 * kProbeFmaLanes * 2 / KILN_PROBE_TIME(KILN_PROBE_FMA) / 1e9;
#else
  method = "not measured (no FMA instruction in this build)";
  return 0;
#endif
}

// int8 x int8 products summed into int32 (x2 ops), as quantized dot products do.
double int8_dot_gops(std::string& method) {
#if defined(KILN_PROBE_INT8)
  method = kProbeInt8Method;
  return double(kProbeSteps) * 12 * kProbeInt8Bytes * 2 / KILN_PROBE_TIME(KILN_PROBE_INT8) / 1e9;
#else
  method = "not measured (no int8 dot-product instruction in this build)";
  return 0;
#endif
}

}  // namespace

double MachineLimits::bandwidth(int threads) const {
  if (read_gbps.empty()) return 0;
  return read_gbps[static_cast<size_t>(std::clamp(threads, 1, int(read_gbps.size())) - 1)];
}

MachineLimits probe_machine(int max_threads) {
  MachineLimits m;
  m.cpu = cpu_model();
  const size_t n = (size_t(2) << 30) / sizeof(float);
  std::unique_ptr<float, decltype(&std::free)> buffer(static_cast<float*>(std::aligned_alloc(64, n * sizeof(float))), &std::free);
  if (!buffer) throw Error("machine probe: cannot allocate 2 GiB");
#pragma omp parallel for schedule(static) num_threads(max_threads)
  for (size_t i = 0; i < n; ++i) buffer.get()[i] = 1.0f;  // touch pages from the threads that will read them
  for (int t = 1; t <= max_threads; ++t) m.read_gbps.push_back(read_bandwidth(buffer.get(), n, t));
  probe_core_peaks(m);
  return m;
}

void probe_core_peaks(MachineLimits& m) {
  m.fp32_gflops_per_core = fp32_fma_gflops(m.fp32_method);
  m.int8_gops_per_core = int8_dot_gops(m.int8_method);
}

}  // namespace kiln
